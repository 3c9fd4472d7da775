import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { createDashboard, type Dashboard } from '../../src/dashboard/dashboard.js';
import { nodeHandler } from '../../src/http/index.js';
import { LOCAL_MEMCACHED } from './stack.js';

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
    const dashboard = createDashboard({ basePath: '/ops', refreshSeconds: 0, memcached: LOCAL_MEMCACHED, ...defaults, ...options }, env);
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
