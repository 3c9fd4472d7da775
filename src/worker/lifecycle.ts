import type { Logger } from 'pino';
import { queueNameOf } from '../config/env.js';
import type { WorkerConfig } from './config.js';
import { type Acts, flushSteps } from './fate/acts.js';
import type { WorkerContext } from './context.js';

/** The worker's start line, and the warning when no dedupe lock is configured. */
export function logStarted(log: Logger, c: WorkerConfig, queues: readonly { readonly url: string }[]): void {
  const dedupe = c.memcached?.servers ?? (c.lock ? 'custom' : 'off');
  log.info(
    {
      queues: queues.map((q) => queueNameOf(q.url)),
      jobs: c.jobs.names(),
      concurrency: c.concurrency,
      dedupe,
      metrics: typeof c.metrics.sink === 'string' ? c.metrics.sink : 'custom',
    },
    'worker started',
  );
  if (dedupe === 'off') {
    log.warn(
      'no memcached configured (memcached option, --memcached or SQS_JOBS_MEMCACHED): running jobs without the dedupe lock (at-least-once; one job id may run twice at once)',
    );
  }
}

/** Shutdown's closing steps, in order, once every message is settled. */
export function closingSteps(
  ctx: Pick<WorkerContext, 'heartbeat' | 'lock' | 'metrics' | 'status' | 'drains' | 'tenants' | 'closeClients'>,
  acts: Acts,
): (readonly [string, () => unknown])[] {
  return [
    ...flushSteps(acts),
    ['flush job status', () => ctx.status?.tracker.flush()],
    ['flush drain counts', () => ctx.drains?.close()],
    ['report tenants', () => ctx.tenants?.close()],
    ['flush metrics', () => ctx.metrics?.close()],
    ['stop heartbeat', () => ctx.heartbeat.close()],
    ['close lock', () => ctx.lock.close()],
    ['close clients', () => ctx.closeClients()],
  ];
}
