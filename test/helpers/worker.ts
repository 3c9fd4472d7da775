import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import type { WorkerOptions } from '../../src/worker/options.js';
import type { WorkerEvents } from '../../src/core/job-events.js';
import { LOCAL_ENV, LOCAL_MEMCACHED, quietLogger } from './stack.js';

/** Options of a worker in a unit test (over an in-memory queue): polls without waiting, deletes at once, logs and publishes nothing. */
export const UNIT_WORKER = {
  waitTimeSeconds: 0,
  deleteFlushMs: 0,
  handleSignals: false,
  logger: quietLogger,
  metrics: { sink: 'off' },
} as const;

/** A worker with test-friendly defaults: short polls, short visibility, its own lock key space. */
export function testWorker(options: Omit<WorkerOptions, 'logger'> & Partial<Pick<WorkerOptions, 'logger'>>): Worker {
  return createWorker(
    {
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 4,
      deleteFlushMs: 20,
      shutdownTimeoutMs: 10_000,
      handleSignals: false,
      logger: quietLogger,
      metrics: { sink: 'off' },
      ...(options.lock === undefined ? { memcached: LOCAL_MEMCACHED } : {}),
      lockKeyPrefix: `test-${randomUUID().slice(0, 8)}:`,
      ...options,
    },
    LOCAL_ENV,
  );
}

/** Collect every event of a worker, in order, for assertions. */
export function recordEvents(worker: Worker) {
  const seen: { event: keyof WorkerEvents; payload: unknown }[] = [];
  const names: (keyof WorkerEvents)[] = [
    'job:start',
    'job:succeeded',
    'job:failed',
    'job:dead-lettered',
    'job:duplicate',
    'job:handed-back',
    'job:resent',
    'job:deferred',
    'job:waiting',
    'job:cancelled',
    'job:lock-unavailable',
    'heartbeat:lost',
    'batch:start',
    'batch:end',
    'lock:unavailable',
    'lock:restored',
    'error',
  ];
  for (const name of names) worker.on(name, (payload?: unknown) => seen.push({ event: name, payload }));
  return {
    seen,
    count: (event: keyof WorkerEvents) => seen.filter((e) => e.event === event).length,
    of: <K extends keyof WorkerEvents>(event: K) => seen.filter((e) => e.event === event).map((e) => e.payload as WorkerEvents[K][0]),
  };
}

/** Workers started through the returned function are stopped after each test. */
export function useWorkers(): (options: Parameters<typeof testWorker>[0]) => Worker {
  const running: Worker[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
  });
  return (options) => {
    const worker = testWorker(options);
    running.push(worker);
    return worker;
  };
}
