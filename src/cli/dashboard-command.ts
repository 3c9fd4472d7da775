import { createServer } from 'node:http';
import type { Command } from 'commander';
import { ConfigError, SqsJobsError } from '../core/errors.js';
import { type DashboardAccess, isLoopbackHost } from '../dashboard/auth.js';
import { createDashboard } from '../dashboard/dashboard.js';
import { nodeHandler } from '../http/node.js';
import { integer, type AwsFlags, type CliContext, UsageError } from './commands.js';

interface DashboardFlags extends AwsFlags {
  readonly port?: string;
  readonly host?: string;
  readonly queue?: string[];
  readonly readOnly?: boolean;
  readonly sla?: string;
  readonly window?: string;
  readonly namespace?: string;
  readonly table?: string;
  readonly memcached?: string;
  readonly lockKeyPrefix?: string;
  readonly cloudwatchEndpoint?: string;
  readonly authFile?: string;
  readonly trustAlb?: string;
  readonly archive?: string;
  readonly s3Endpoint?: string;
}

const AUTH_HELP = `
Sign-in (every request needs it once a user or token is set; a wrong or missing one gets 401):
  --auth-file <path>, else SQS_JOBS_DASHBOARD_AUTH_FILE: one credential a line,
      bearer <token> [<name>]       a token (16+ characters); the audit line names <name>
      basic <user> <password>       a user the browser asks for (password 8+ characters)
  SQS_JOBS_DASHBOARD_TOKEN       bearer tokens, comma-separated
  SQS_JOBS_DASHBOARD_USERS       user:password pairs, comma-separated (so no comma in a password)
  --trust-alb <alb-arn>, else SQS_JOBS_DASHBOARD_TRUST_ALB: behind an ALB that signs users in
      (authenticate-oidc), the ALB's ARN: each request needs the x-amzn-oidc-data header that ALB
      signed (checked with its public key from AWS); the audit line names its email, else its sub
Beyond this machine (--host other than 127.0.0.0/8, ::1, localhost) it starts only with a sign-in
or --read-only. Each action's audit line (JSON on stdout, always at info) names its user.`;

/**
 * The dashboard's sign-in flags and their help, added to its command (the rest of its flags are
 * declared with the other commands').
 */
export function withDashboardAuth(command: Command): Command {
  return command
    .option('--auth-file <path>', 'credentials, one a line: `bearer <token> [<name>]` or `basic <user> <password>` (see below)')
    .option('--trust-alb <alb-arn>', 'behind an ALB that signs users in (authenticate-oidc): its ARN; its signed header is verified')
    .addHelpText('after', AUTH_HELP);
}

/** The options the flags set whose errors name them (the others' errors are the flags' own). */
const FLAG_NAMES = {
  'options.auth.file': '--auth-file',
  'options.auth.trustAlb': '--trust-alb',
  'options.archive': '--archive',
  'options.s3Endpoint': '--s3-endpoint',
};

/** Errors about the options the flags set, in the flags' terms. */
function inFlagTerms<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof SqsJobsError) || error.code !== 'CONFIG_INVALID') throw error;
    const message = Object.entries(FLAG_NAMES).reduce((m, [option, flag]) => m.replaceAll(option, flag), error.message);
    throw new ConfigError(message, { cause: error });
  }
}

/**
 * The rule beyond this machine: listening on an address other than loopback without `--read-only`
 * needs a sign-in (users, tokens, or a trusted ALB's signed header), else the actions (replay,
 * purge, cancel, pause) would be open to anyone who reaches the port (CONFIG_INVALID). Else the
 * lines that say how the dashboard is reached.
 */
export function accessLines(access: DashboardAccess, host: string, readOnly: boolean): string[] {
  const { users, tokens, alb } = access;
  const signIn = [
    users > 0 ? `basic auth (${users} user${users === 1 ? '' : 's'})` : '',
    tokens > 0 ? `bearer tokens (${tokens})` : '',
    alb === undefined ? '' : `the signed header of the ALB ${alb}`,
  ]
    .filter((s) => s !== '')
    .join(', ');
  if (!isLoopbackHost(host) && !readOnly && signIn === '') {
    throw new ConfigError(
      `--host ${host} reaches beyond this machine, and the dashboard's actions (replay, purge, cancel, pause) would be open to ` +
        'anyone who can reach the port: give it a sign-in (--auth-file, SQS_JOBS_DASHBOARD_TOKEN or SQS_JOBS_DASHBOARD_USERS), ' +
        'put it behind an ALB that signs users in (--trust-alb <alb-arn>), or serve it --read-only',
    );
  }
  const lines = signIn === '' ? [] : [`sign-in: ${signIn}`];
  if (!isLoopbackHost(host) && signIn === '') {
    lines.push('note: listening beyond this machine with no sign-in: anyone who can reach the port sees the queues and dead letters');
  }
  return lines;
}

/** `sqs-jobs dashboard`: serve the dashboard until Ctrl-C (or SIGTERM). */
export async function dashboardCommand(flags: DashboardFlags, { out, env, signal }: CliContext): Promise<void> {
  const port = integer(flags.port, '--port', 0) ?? 3000;
  if (port > 65_535) throw new ConfigError(`--port: must be 0-65535 (got ${port})`);
  const host = flags.host ?? '127.0.0.1';
  if (flags.s3Endpoint !== undefined && flags.archive === undefined)
    throw new UsageError('--s3-endpoint is for the archive: it goes with --archive');
  const sla = flags.sla === undefined ? undefined : Number(flags.sla);
  if (sla !== undefined && !(sla > 0)) throw new ConfigError(`--sla: must be a number of seconds > 0 (got ${JSON.stringify(flags.sla)})`);
  // On a loopback address, only the names of this machine may ask (a page whose name was re-pointed
  // at 127.0.0.1, DNS rebinding, is refused); beyond it the caller chose who can reach it.
  const loopback = isLoopbackHost(host);
  const shown = host.includes(':') ? `[${host}]` : host;
  let allowed = new Set<string>();
  const auth = {
    ...(flags.authFile === undefined ? {} : { file: flags.authFile }),
    ...(flags.trustAlb === undefined ? {} : { trustAlb: flags.trustAlb }),
  };
  const dashboard = inFlagTerms(() =>
    createDashboard(
      {
        auth,
        ...(loopback ? { allowedHosts: (h: string) => allowed.has(h.toLowerCase()) } : {}),
        ...(flags.queue === undefined ? {} : { queues: flags.queue }),
        readOnly: flags.readOnly ?? false,
        ...(sla === undefined ? {} : { slaSeconds: sla }),
        ...(flags.window === undefined ? {} : { windowMinutes: integer(flags.window, '--window', 1) }),
        ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
        ...(flags.table === undefined ? {} : { store: { table: flags.table } }),
        ...(flags.memcached === undefined ? {} : { memcached: flags.memcached }),
        ...(flags.lockKeyPrefix === undefined ? {} : { lockKeyPrefix: flags.lockKeyPrefix }),
        ...(flags.archive === undefined ? {} : { archive: flags.archive, s3Endpoint: flags.s3Endpoint }),
        endpoint: flags.endpoint,
        region: flags.region,
        cloudwatchEndpoint: flags.cloudwatchEndpoint,
      },
      env,
    ),
  );
  let access: string[];
  try {
    access = accessLines(dashboard.access, host, flags.readOnly ?? false);
  } catch (error) {
    dashboard.close();
    throw error;
  }
  const server = createServer(nodeHandler(dashboard));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    allowed = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`, `${shown.toLowerCase()}:${bound}`]);
    out(`dashboard: http://${shown}:${bound}/${flags.readOnly ? ' (read-only)' : ''}  (Ctrl-C to stop)`);
    for (const line of access) out(line);
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  } finally {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections(); // keep-alive connections of open pages would hold the close
    await closed;
    dashboard.close();
  }
}
