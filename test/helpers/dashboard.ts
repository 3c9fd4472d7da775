import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { createDashboard, type Dashboard } from '../../src/dashboard/dashboard.js';
import { nodeHandler } from '../../src/http/index.js';
import { eventually, LOCAL_MEMCACHED } from './stack.js';

type DashboardOptions = NonNullable<Parameters<typeof createDashboard>[0]>;

/**
 * Dashboards served on 127.0.0.1 for a browser test (mounted at /ops, no auto-refresh, on the
 * local memcached and `defaults`), each closed with its server after the file's tests.
 * `serve(options)` answers its origin.
 */
export function useDashboards(
  defaults: DashboardOptions,
  env: Record<string, string | undefined>,
): (options: DashboardOptions) => Promise<string> {
  const servers: { server: Server; dashboard: Dashboard }[] = [];
  afterAll(() => {
    for (const { server, dashboard } of servers) {
      server.closeAllConnections();
      server.close();
      dashboard.close();
    }
  });
  return async (options) => {
    // Audit lines to nowhere unless a test reads them (its own `logger`): they would fill the run's output.
    const quiet = { info: () => {}, warn: () => {} };
    const dashboard = createDashboard(
      { basePath: '/ops', refreshSeconds: 0, memcached: LOCAL_MEMCACHED, logger: quiet, ...defaults, ...options },
      env,
    );
    const server = createServer(nodeHandler(dashboard));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push({ server, dashboard });
    const address = server.address();
    return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
  };
}

/** A screenshot of the whole page for the docs, when DASHBOARD_SCREENSHOTS names a folder (docs/dashboard); else nothing. */
export async function shoot(page: Page, name: string): Promise<void> {
  const shots = process.env.DASHBOARD_SCREENSHOTS;
  if (shots === undefined) return;
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}

/** The ARN of the fake ALB (startFakeAlb): the `signer` its tokens name. */
export const ALB_ARN = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/app/ops/50dc6c495c0c9188';

/** An ALB's signing, for tests: a P-256 key pair made here, the public key served as AWS serves them. */
export interface FakeAlb {
  /** Where its public keys are (`<keysUrl>/<kid>`, PEM): the dashboard's `auth.albKeysUrl`. */
  readonly keysUrl: string;
  readonly kid: string;
  /** How many key requests it has answered. */
  readonly served: number;
  /**
   * An `x-amzn-oidc-data` value: `claims` signed ES256 under a header naming the key, the ALB
   * (ALB_ARN) and an expiry a minute away (`header` overrides them). Padded with `=` as ALBs do;
   * `forged`: signed with another key.
   */
  token(claims: Record<string, unknown>, header?: Record<string, unknown>, forged?: boolean): string;
  close(): Promise<void>;
}

/** A fake ALB's keys on 127.0.0.1 (an ephemeral port); close it after the tests. */
export async function startFakeAlb(): Promise<FakeAlb> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomUUID();
  const pem = publicKey.export({ type: 'spki', format: 'pem' });
  let served = 0;
  const server = createServer((req, res) => {
    served++;
    res.writeHead(req.url === `/${kid}` ? 200 : 404, { 'content-type': 'text/plain' }).end(req.url === `/${kid}` ? pem : '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const padded = (b: Buffer) => b.toString('base64url').padEnd(Math.ceil(b.length / 3) * 4, '=');
  return {
    keysUrl: `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`,
    kid,
    get served() {
      return served;
    },
    token(claims, header = {}, forged = false) {
      const head = {
        alg: 'ES256',
        kid,
        signer: ALB_ARN,
        iss: 'https://idp.example',
        client: 'dash',
        exp: Math.floor(Date.now() / 1000) + 60,
      };
      const input = `${padded(Buffer.from(JSON.stringify({ ...head, ...header })))}.${padded(Buffer.from(JSON.stringify(claims)))}`;
      const key = forged ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey : privateKey;
      return `${input}.${padded(sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }))}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * `sqs-jobs dashboard <args>` as a child process (tsx, this checkout): its URL once it serves, what
 * it printed so far, and stop(), which sends Ctrl-C and answers its exit code (a child that exited
 * already, having failed to start, answers its own).
 */
export async function cliDashboard(
  args: readonly string[],
  env: Record<string, string | undefined>,
): Promise<{ url: string; out: () => string; stop: () => Promise<number | null> }> {
  const child = spawn('node_modules/.bin/tsx', ['src/cli/main.ts', 'dashboard', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const add = (d: Buffer) => {
    out += d.toString();
  };
  child.stdout.on('data', add);
  child.stderr.on('data', add);
  const stop = () => {
    const exited =
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve(child.exitCode)
        : new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    return exited;
  };
  try {
    const url = await eventually(
      () => /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)?.[1],
      `the dashboard's URL (got: ${out})`,
      30_000,
    );
    return { url, out: () => out, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
