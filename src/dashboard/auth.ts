import { createHmac, createPublicKey, type KeyObject, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { toError } from '../core/errors.js';
import type { AlbEntry, AuthSettings } from './auth-config.js';
import { text } from './responses.js';

/** How a request's user was known: a basic auth user, a bearer token, the trusted ALB's signed header, or `authorize`. */
export type AuthVia = 'basic' | 'bearer' | 'alb' | 'authorize';

/** Who made a request, as far as the dashboard knows (`user` undefined: no name, e.g. an unnamed token or no sign-in at all). */
export interface Identity {
  readonly user: string | undefined;
  readonly via: AuthVia | undefined;
}

/** What the dashboard asks of a request: its counts of users and tokens, and the ALB whose signed header it trusts (its ARN). */
export interface DashboardAccess {
  /** Basic auth users. */
  readonly users: number;
  /** Bearer tokens. */
  readonly tokens: number;
  /** The ARN of the ALB whose `x-amzn-oidc-data` it verifies, when one is trusted. */
  readonly alb: string | undefined;
}

/** The gate's answer: the request's identity, or its 401 and why (`no credential`, `wrong credential[: why]`: never the credential). */
export type Verdict =
  | { readonly ok: true; readonly identity: Identity }
  | { readonly ok: false; readonly response: Response; readonly reason: string };

interface Known<T> {
  readonly digest: Buffer;
  readonly who: T;
}

/** A value fit for a log line: printable, at most 200 characters. */
export function printable(value: string): string | undefined {
  const clean = value
    .replace(/\p{Cc}/gu, '')
    .trim()
    .slice(0, 200);
  return clean === '' ? undefined : clean;
}

/** `Authorization: <scheme> <credential>`, the scheme in lower case. */
function authorization(request: Request): { scheme: string; credential: string } | undefined {
  const m = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s+(\S+)\s*$/.exec(request.headers.get('authorization') ?? '');
  return m === null ? undefined : { scheme: m[1]!.toLowerCase(), credential: m[2]! };
}

/**
 * Checks each request's credential: a basic auth user or bearer token against the configured ones
 * in constant time (the credential given and each configured one are compared as HMAC-SHA256
 * digests under a key made at start, so every comparison is of 32 bytes and `timingSafeEqual` runs
 * over every entry, not stopping at a match; only digests are kept), or the trusted ALB's signed
 * `x-amzn-oidc-data` header (AlbVerifier). With none configured, every request passes.
 */
export class AuthGate {
  readonly #key = randomBytes(32);
  readonly #users: readonly Known<string>[];
  readonly #tokens: readonly Known<string | undefined>[];
  readonly #alb: AlbVerifier | undefined;

  /** `warn`: where a key the ALB's header names and AWS does not serve is reported. */
  constructor(settings: AuthSettings, warn: (message: string) => void = () => {}) {
    this.#users = settings.users.map((u) => ({ digest: this.#digest('basic', u.user, u.password), who: u.user }));
    this.#tokens = settings.tokens.map((t) => ({ digest: this.#digest('bearer', t.token), who: t.name }));
    this.#alb = settings.alb === undefined ? undefined : new AlbVerifier(settings.alb, warn);
  }

  /** The counts and the trusted ALB, for the start-up line and the CLI's rule beyond loopback. */
  get access(): DashboardAccess {
    return { users: this.#users.length, tokens: this.#tokens.length, alb: this.#alb?.signer };
  }

  /** Whether requests need a credential (a user, a token or an ALB is configured). */
  get required(): boolean {
    return this.#users.length + this.#tokens.length > 0 || this.#alb !== undefined;
  }

  /** The request's identity, or a 401 when a credential is needed and not right. The user comes from the credential alone. */
  async check(request: Request): Promise<Verdict> {
    if (!this.required) return { ok: true, identity: { user: undefined, via: undefined } };
    const signed = this.#alb === undefined ? null : request.headers.get(ALB_HEADER);
    if (signed !== null && this.#alb !== undefined) {
      const found = await this.#alb.verify(signed);
      if ('why' in found) return this.#refuse('wrong credential', 'alb', found.why);
      return { ok: true, identity: { user: found.user, via: 'alb' } };
    }
    const given = authorization(request);
    if (given?.scheme === 'basic' && this.#users.length > 0) {
      const decoded = Buffer.from(given.credential, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const user = this.#match(this.#users, this.#digest('basic', decoded.slice(0, colon), decoded.slice(colon + 1)));
      if (colon >= 0 && user !== undefined) return { ok: true, identity: { user: user.who, via: 'basic' } };
      return this.#refuse('wrong credential', 'basic');
    }
    if (given?.scheme === 'bearer' && this.#tokens.length > 0) {
      const token = this.#match(this.#tokens, this.#digest('bearer', given.credential));
      if (token !== undefined) return { ok: true, identity: { user: token.who, via: 'bearer' } };
      return this.#refuse('wrong credential', 'bearer');
    }
    const own = this.#users.length + this.#tokens.length > 0;
    return this.#refuse(
      given === undefined || !own ? 'no credential' : 'wrong credential',
      this.#users.length > 0 ? 'basic' : own ? 'bearer' : 'alb',
    );
  }

  #digest(...parts: string[]): Buffer {
    return createHmac('sha256', this.#key).update(parts.join('\0')).digest();
  }

  /** The entry whose digest equals `digest`, comparing with every entry whatever is found. */
  #match<T>(known: readonly Known<T>[], digest: Buffer): Known<T> | undefined {
    let found: Known<T> | undefined;
    for (const k of known) if (timingSafeEqual(k.digest, digest) && found === undefined) found = k;
    return found;
  }

  /**
   * 401 with one challenge (a browser does not read two on one line): Bearer when a bearer token was
   * tried and tokens are configured (RFC 6750's `invalid_token`), else Basic when users are
   * configured (a browser then asks for them), else Bearer. Behind the ALB alone, none: the ALB signs
   * users in, and a request without its header did not come through it (`why`: what is wrong with it).
   */
  #refuse(reason: 'no credential' | 'wrong credential', scheme: 'basic' | 'bearer' | 'alb', why?: string): Verdict {
    if (scheme === 'alb') {
      const body = `this dashboard is reached through its load balancer, which signs users in: its ${ALB_HEADER} header is ${why ?? 'missing'}`;
      return { ok: false, reason: why === undefined ? reason : `${reason}: ${why}`, response: text(401, body) };
    }
    const challenge =
      scheme === 'basic'
        ? 'Basic realm="sqs-jobs", charset="UTF-8"'
        : `Bearer realm="sqs-jobs"${reason === 'wrong credential' ? ', error="invalid_token"' : ''}`;
    const what = scheme === 'basic' ? 'a user and password (basic auth)' : 'a bearer token (Authorization: Bearer <token>)';
    const body = `${reason === 'no credential' ? 'sign in' : 'the credential given is not right'}: this dashboard needs ${what}`;
    return { ok: false, reason, response: text(401, body, { 'www-authenticate': challenge }) };
  }
}

/** The header an ALB with authenticate-oidc sends: the user's claims as a JWT it signed. */
const ALB_HEADER = 'x-amzn-oidc-data';
/** How far past its `exp` a token is still taken: clocks differ a little. */
const SKEW_S = 60;
/** A key id as the ALB writes them (a UUID): nothing else goes into the key's URL. */
const KID = /^[A-Za-z0-9-]{1,64}$/;
const KEYS_KEPT = 16;
/** A key that could not be fetched is asked for again after this long; at most FETCHES_A_MINUTE keys are fetched a minute. */
const RETRY_MS = 60_000;
const FETCHES_A_MINUTE = 10;

/** A JWT part: base64url JSON (an ALB may pad it with `=`). */
function part(encoded: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded.replace(/=+$/, ''), 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifies the `x-amzn-oidc-data` header of one ALB: a JWT whose header says `alg` ES256, `signer`
 * (the ALB's ARN, which must be the trusted one), `exp` (not past, 60 s of skew allowed) and `kid`,
 * the key it was signed with, fetched from `<keysUrl>/<kid>` (PEM, P-256) and kept. The signature
 * is ECDSA P-256 SHA-256 over the first two parts as sent, raw r||s. The user is the `email` claim,
 * else `sub`.
 */
class AlbVerifier {
  readonly signer: string;
  readonly #keysUrl: string;
  readonly #warn: (message: string) => void;
  readonly #keys = new Map<string, { at: number; key: Promise<KeyObject | string> }>();
  #fetches = { since: 0, count: 0 };

  constructor(alb: AlbEntry, warn: (message: string) => void) {
    this.signer = alb.signer;
    this.#keysUrl = alb.keysUrl;
    this.#warn = warn;
  }

  async verify(token: string): Promise<{ user: string | undefined } | { why: string }> {
    const [head = '', body = '', signature = '', ...rest] = token.trim().split('.');
    const header = part(head);
    const claims = part(body);
    if (header === undefined || claims === undefined || rest.length > 0) return { why: 'not a JWT' };
    if (header.alg !== 'ES256') return { why: 'not signed ES256' };
    if (header.signer !== this.signer) return { why: 'signed by another load balancer' };
    const exp = Number(header.exp ?? claims.exp);
    if (!Number.isFinite(exp) || exp + SKEW_S < Date.now() / 1000) return { why: 'expired' };
    if (typeof header.kid !== 'string' || !KID.test(header.kid)) return { why: 'no key id' };
    const key = await this.#key(header.kid);
    if (typeof key === 'string') return { why: key };
    const sig = Buffer.from(signature.replace(/=+$/, ''), 'base64url');
    if (sig.length !== 64 || !verify('sha256', Buffer.from(`${head}.${body}`), { key, dsaEncoding: 'ieee-p1363' }, sig)) {
      return { why: 'bad signature' };
    }
    const user = [claims.email, claims.sub].find((c): c is string => typeof c === 'string' && printable(c) !== undefined);
    return { user: user === undefined ? undefined : printable(user) };
  }

  /** The key `kid`, kept once fetched; a failure (its reason) is kept for RETRY_MS, and unknown keys are fetched at most FETCHES_A_MINUTE a minute. */
  #key(kid: string): Promise<KeyObject | string> {
    const now = Date.now();
    const kept = this.#keys.get(kid);
    if (kept !== undefined && now - kept.at < RETRY_MS) return kept.key;
    if (now - this.#fetches.since > 60_000) this.#fetches = { since: now, count: 0 };
    if (++this.#fetches.count > FETCHES_A_MINUTE) return kept?.key ?? Promise.resolve('too many unknown keys this minute');
    const key: Promise<KeyObject | string> = this.#fetch(kid).then((k) => {
      if (typeof k === 'string') this.#warn(`the dashboard could not check the ALB's signed header: ${k}`);
      else if (this.#keys.get(kid)?.key === key) this.#keys.set(kid, { at: Number.POSITIVE_INFINITY, key });
      return k;
    });
    this.#keys.delete(kid);
    this.#keys.set(kid, { at: now, key });
    // Over the limit, a key that failed (or is being fetched) goes first, the oldest; a key fetched goes only when all are.
    if (this.#keys.size > KEYS_KEPT) {
      const drop = [...this.#keys].find(([, v]) => v.at !== Number.POSITIVE_INFINITY) ?? [...this.#keys][0]!;
      this.#keys.delete(drop[0]);
    }
    return key;
  }

  async #fetch(kid: string): Promise<KeyObject | string> {
    try {
      const res = await fetch(`${this.#keysUrl}/${kid}`, { signal: AbortSignal.timeout(5_000), redirect: 'error' });
      if (!res.ok) return `its key ${kid} is not at ${this.#keysUrl} (HTTP ${res.status})`;
      const key = createPublicKey(await res.text());
      if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
        return `its key ${kid} is not a P-256 key`;
      return key;
    } catch (error) {
      return `its key ${kid} could not be fetched from ${this.#keysUrl}: ${toError(error).message}`;
    }
  }
}

/** Whether `host` (a name or address to listen on) is this machine only: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(h)) return true;
  const v4 = /^(?:::ffff:)?127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return v4?.slice(1).every((n) => Number(n) <= 255) === true;
}
