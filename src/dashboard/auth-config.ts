import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { Env } from '../config/env.js';
import { ConfigError } from '../core/errors.js';

/*
 * Where the dashboard's credentials come from: the `auth` option, field by field, else the
 * environment (SQS_JOBS_DASHBOARD_AUTH_FILE, _TOKEN, _USERS, _TRUST_ALB, _ALB_KEYS_URL). Errors
 * name the option, variable or file line and the rule, never the secret: parseConfig shows the
 * value it got, so secrets are checked here, outside zod.
 */

/** An Application Load Balancer's ARN: its partition and region say where its public keys are. */
const ALB_ARN =
  /^arn:(aws[a-z-]*):elasticloadbalancing:([a-z]{2}(?:-[a-z]+)+-\d+):\d{12}:loadbalancer\/app\/[A-Za-z0-9-]{1,32}\/[0-9a-f]{1,32}$/;
const ALB_ARN_RULE =
  'must be an Application Load Balancer ARN, e.g. arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/ops/50dc6c495c0c9188';
/** What a bearer token may hold (RFC 6750's b64token), at least 16 characters. */
const TOKEN = /^[A-Za-z0-9._~+/-]{16,}=*$/;
const TOKEN_RULE = 'must be 16 or more of A-Z a-z 0-9 - . _ ~ + / (then any = padding), e.g. from `openssl rand -base64 32`';
const PRINTABLE = /^[^\p{Cc}]+$/u;
const MIN_PASSWORD = 8;

/** The `auth` option: the types checked here; each secret's rules in resolveAuth (its errors must not show it). */
export const dashboardAuthSchema = z
  .object({
    /** A file of credentials, one a line: `bearer <token> [<name>]` or `basic <user> <password>`; `#` starts a comment. */
    file: z.string().min(1, 'must name a file').optional(),
    /** Bearer tokens, each a string or `{ token, name }` (the name is the holder the audit line names). */
    tokens: z.array(z.union([z.string(), z.object({ token: z.string(), name: z.string().optional() }).strict()])).optional(),
    /** Users of basic auth (the browser asks for them). */
    users: z.array(z.object({ user: z.string(), password: z.string() }).strict()).optional(),
    /**
     * The ARN of an ALB that signs users in (`authenticate-oidc`): a request passes with the
     * `x-amzn-oidc-data` header that ALB signed (ES256, its key fetched from AWS), and the audit
     * line names its `email` claim, else its `sub`.
     */
    trustAlb: z.string().optional(),
    /** Where the ALB's public keys are fetched (`<url>/<kid>`), for tests; default from the ARN's partition and region. */
    albKeysUrl: z.string().optional(),
  })
  .strict();

/** The `auth` option of createDashboard. */
export type DashboardAuth = z.input<typeof dashboardAuthSchema>;

/** A bearer token and its holder's name (when given). */
export interface TokenEntry {
  readonly token: string;
  readonly name: string | undefined;
}

/** A basic auth user and password. */
export interface UserEntry {
  readonly user: string;
  readonly password: string;
}

/** The ALB whose signed header is trusted: its ARN (the header's `signer`) and where its public keys are. */
export interface AlbEntry {
  readonly signer: string;
  readonly keysUrl: string;
}

/** The credentials from every source, checked; `notes` say what is allowed but unwise (an auth file others may read). */
export interface AuthSettings {
  readonly tokens: readonly TokenEntry[];
  readonly users: readonly UserEntry[];
  readonly alb: AlbEntry | undefined;
  readonly notes: readonly string[];
}

function checkToken(token: string, where: string): void {
  if (!TOKEN.test(token)) throw new ConfigError(`${where}: ${TOKEN_RULE} (got ${token.length} characters)`);
}

function checkName(name: string | undefined, where: string): string | undefined {
  if (name === undefined) return undefined;
  if (!PRINTABLE.test(name) || name.length > 128) throw new ConfigError(`${where}: a name must be 1-128 printable characters`);
  return name;
}

/** A user and password, checked; `named`: the error may name the user (not from SQS_JOBS_DASHBOARD_USERS, where a stray comma makes a piece of a password look like a user). */
function checkUser(user: string, password: string, where: string, named = true): UserEntry {
  if (user === '' || user.length > 128 || user.includes(':') || !PRINTABLE.test(user)) {
    throw new ConfigError(`${where}: the user must be 1-128 printable characters without ':'`);
  }
  if (password.length < MIN_PASSWORD || !PRINTABLE.test(password)) {
    throw new ConfigError(
      `${where}: the password${named ? ` of ${user}` : ''} must be ${MIN_PASSWORD} or more printable characters (got ${password.length})`,
    );
  }
  return { user, password };
}

/** The trusted ALB: its ARN checked, its keys at AWS's URL for its partition and region (aws, aws-us-gov) unless `keysUrl` says. */
function checkAlb(arn: string, keysUrl: string | undefined, where: [string, string]): AlbEntry {
  const m = ALB_ARN.exec(arn);
  if (m === null) throw new ConfigError(`${where[0]}: ${ALB_ARN_RULE} (got ${JSON.stringify(arn)})`);
  if (keysUrl !== undefined) {
    if (!/^https?:\/\/[^/\s]+(\/\S*)?$/.test(keysUrl))
      throw new ConfigError(`${where[1]}: must be an http(s) URL (got ${JSON.stringify(keysUrl)})`);
    return { signer: arn, keysUrl: keysUrl.replace(/\/+$/, '') };
  }
  const [, partition, region] = m;
  if (partition === 'aws') return { signer: arn, keysUrl: `https://public-keys.auth.elb.${region}.amazonaws.com` };
  if (partition === 'aws-us-gov') return { signer: arn, keysUrl: `https://s3-${region}.amazonaws.com/aws-elb-public-keys-prod-${region}` };
  throw new ConfigError(`${where[0]}: where the ALBs of the partition ${partition} publish their keys is not known: set ${where[1]}`);
}

/**
 * An auth file's credentials. One a line: `bearer <token> [<name>]` (the name is the rest of the
 * line) or `basic <user> <password>` (the password is the rest of the line, trailing spaces
 * dropped); blank lines and lines starting with `#` are skipped. Errors name the line, never a secret.
 */
export function parseAuthFile(text: string, path: string): { tokens: TokenEntry[]; users: UserEntry[] } {
  const tokens: TokenEntry[] = [];
  const users: UserEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    const where = `${path} line ${i + 1}`;
    if (line === '' || line.startsWith('#')) return;
    const [kind = '', first = '', ...rest] = line.split(/\s+/);
    const tail = line.slice(kind.length).trimStart().slice(first.length).trimStart();
    if (kind.toLowerCase() === 'bearer' && first !== '') {
      checkToken(first, where);
      tokens.push({ token: first, name: checkName(rest.length === 0 ? undefined : tail, where) });
    } else if (kind.toLowerCase() === 'basic' && rest.length > 0) {
      users.push(checkUser(first, tail, where));
    } else {
      throw new ConfigError(`${where}: must be \`bearer <token> [<name>]\` or \`basic <user> <password>\` (or a # comment)`);
    }
  });
  return { tokens, users };
}

function readAuthFile(path: string, source: string, notes: string[]): { tokens: TokenEntry[]; users: UserEntry[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
    // Owner-only is the rule for a file of secrets (as ssh asks of a key); a Kubernetes secret mount is 0644 by default, so say it, don't refuse.
    if ((statSync(path).mode & 0o077) !== 0) notes.push(`the auth file ${path} can be read by others than its owner: chmod 600 it`);
  } catch (error) {
    throw new ConfigError(`${source}: cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = parseAuthFile(text, path);
  if (parsed.tokens.length + parsed.users.length === 0) throw new ConfigError(`${source}: ${path} holds no credential`);
  return parsed;
}

function fromEnv(env: Env, name: string): string[] | undefined {
  const value = env[name];
  if (value === undefined || value.trim() === '') return undefined;
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/** The dashboard's credentials: each field of `auth` given, else its environment variable; every source adds to the others. */
export function resolveAuth(auth: z.output<typeof dashboardAuthSchema> | undefined, env: Env): AuthSettings {
  const notes: string[] = [];
  const tokens: TokenEntry[] = [];
  const users: UserEntry[] = [];
  const unnamed = new Set<UserEntry>();
  const file = auth?.file ?? env.SQS_JOBS_DASHBOARD_AUTH_FILE;
  if (file !== undefined && file !== '') {
    const parsed = readAuthFile(file, auth?.file === undefined ? 'SQS_JOBS_DASHBOARD_AUTH_FILE' : 'options.auth.file', notes);
    tokens.push(...parsed.tokens);
    users.push(...parsed.users);
  }
  if (auth?.tokens !== undefined) {
    auth.tokens.forEach((t, i) => {
      const entry = typeof t === 'string' ? { token: t, name: undefined } : t;
      checkToken(entry.token, `options.auth.tokens[${i}]`);
      tokens.push({ token: entry.token, name: checkName(entry.name, `options.auth.tokens[${i}]`) });
    });
  } else {
    fromEnv(env, 'SQS_JOBS_DASHBOARD_TOKEN')?.forEach((token, i) => {
      checkToken(token, `SQS_JOBS_DASHBOARD_TOKEN (token ${i + 1})`);
      tokens.push({ token, name: undefined });
    });
  }
  if (auth?.users !== undefined) {
    users.push(...auth.users.map((u, i) => checkUser(u.user, u.password, `options.auth.users[${i}]`)));
  } else {
    // Split on commas: a password here cannot hold one, and no error names the user (it may be a piece of a password).
    fromEnv(env, 'SQS_JOBS_DASHBOARD_USERS')?.forEach((pair, i) => {
      const colon = pair.indexOf(':');
      const where = `SQS_JOBS_DASHBOARD_USERS (entry ${i + 1})`;
      if (colon < 0) throw new ConfigError(`${where}: must be user:password (entries separated by commas; a password holds none)`);
      const user = checkUser(pair.slice(0, colon), pair.slice(colon + 1), where, false);
      unnamed.add(user);
      users.push(user);
    });
  }
  const twice = users.find((u, i) => users.findIndex((v) => v.user === u.user) !== i);
  if (twice !== undefined) {
    const who = users.some((u) => u.user === twice.user && unnamed.has(u)) ? 'a user' : twice.user;
    throw new ConfigError(`the dashboard's users: ${who} is named twice`);
  }
  const arn = auth?.trustAlb ?? (env.SQS_JOBS_DASHBOARD_TRUST_ALB || undefined);
  const keysUrl = auth?.albKeysUrl ?? (env.SQS_JOBS_DASHBOARD_ALB_KEYS_URL || undefined);
  const where: [string, string] = [
    auth?.trustAlb === undefined ? 'SQS_JOBS_DASHBOARD_TRUST_ALB' : 'options.auth.trustAlb',
    auth?.albKeysUrl === undefined ? 'SQS_JOBS_DASHBOARD_ALB_KEYS_URL' : 'options.auth.albKeysUrl',
  ];
  return { tokens, users, alb: arn === undefined ? undefined : checkAlb(arn, keysUrl, where), notes };
}
