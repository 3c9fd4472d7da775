import { createServer } from 'node:http';
import { ConfigError } from '../core/errors.js';
import { createDashboard } from '../dashboard/dashboard.js';
import { nodeHandler } from '../http/node.js';
import { integer, type AwsFlags, type CliContext } from './commands.js';

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
}

/** `sqs-jobs dashboard`: serve the dashboard until Ctrl-C (or SIGTERM). */
export async function dashboardCommand(flags: DashboardFlags, { out, env, signal }: CliContext): Promise<void> {
  const port = integer(flags.port, '--port', 0) ?? 3000;
  if (port > 65_535) throw new ConfigError(`--port: must be 0-65535 (got ${port})`);
  const host = flags.host ?? '127.0.0.1';
  const sla = flags.sla === undefined ? undefined : Number(flags.sla);
  if (sla !== undefined && !(sla > 0)) throw new ConfigError(`--sla: must be a number of seconds > 0 (got ${JSON.stringify(flags.sla)})`);
  // On a loopback address, only the names of this machine may ask (a page whose name was re-pointed
  // at 127.0.0.1, DNS rebinding, is refused); beyond it the caller chose who can reach it.
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  let allowed = new Set<string>();
  const dashboard = createDashboard(
    {
      ...(loopback ? { allowedHosts: (h: string) => allowed.has(h.toLowerCase()) } : {}),
      ...(flags.queue === undefined ? {} : { queues: flags.queue }),
      readOnly: flags.readOnly ?? false,
      ...(sla === undefined ? {} : { slaSeconds: sla }),
      ...(flags.window === undefined ? {} : { windowMinutes: integer(flags.window, '--window', 1) }),
      ...(flags.namespace === undefined ? {} : { namespace: flags.namespace }),
      ...(flags.table === undefined ? {} : { store: { table: flags.table } }),
      ...(flags.memcached === undefined ? {} : { memcached: flags.memcached }),
      ...(flags.lockKeyPrefix === undefined ? {} : { lockKeyPrefix: flags.lockKeyPrefix }),
      endpoint: flags.endpoint,
      region: flags.region,
      cloudwatchEndpoint: flags.cloudwatchEndpoint,
    },
    env,
  );
  const server = createServer(nodeHandler(dashboard));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    allowed = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`]);
    const shown = host.includes(':') ? `[${host}]` : host;
    out(`dashboard: http://${shown}:${bound}/${flags.readOnly ? ' (read-only)' : ''}  (Ctrl-C to stop)`);
    if (!loopback) {
      out('note: listening beyond this machine; the dashboard has no login of its own: put one in front, or use --read-only');
    }
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
  } finally {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections(); // keep-alive connections of open pages would hold the close
    await closed;
    dashboard.close();
  }
}
