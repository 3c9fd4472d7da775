import type { Logger } from 'pino';
import { queueNameOf } from '../config.js';
import type { WorkerConfig } from './options.js';
import type { WorkerParts } from './parts.js';

/** The worker's start line, and the warning when no dedupe lock is configured. */
export function logStarted(log: Logger, c: WorkerConfig, queues: readonly { readonly url: string }[]): void {
  const dedupe = c.memcached ?? (c.lock ? 'custom' : 'off');
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
export function closingSteps(parts: WorkerParts): (readonly [string, () => unknown])[] {
  return [
    ['flush deletes', () => parts.acks.flush()],
    ['flush hand-backs', () => parts.visibility.flush()],
    ['flush job status', () => parts.flushStatus()],
    ['flush metrics', () => parts.metrics?.close()],
    ['stop heartbeat', () => parts.heartbeat.close()],
    ['close lock', () => parts.lock.close()],
    ['close clients', () => parts.closeClients()],
  ];
}
