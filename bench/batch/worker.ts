/**
 * An in-process sqs-jobs worker as the benchmark runs it: through the counting proxy, with the
 * memcached dedupe lock on, metrics aggregated and serialised (EMF lines that go nowhere), logs off.
 */
import { pino } from 'pino';
import type { AnyDefinition } from '../../src/core/job.js';
import type { Worker } from '../../src/index.js';
import { built, EmfSink } from '../lib/built.js';
import { FAKE_CREDENTIALS, MEMCACHED, type Queue, type Stack } from './stack.js';

export interface WorkerSettings {
  readonly concurrency: number;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds?: number;
  readonly receiveConcurrency?: number;
  readonly maxHeldBatchItems?: number;
  readonly prefetch?: number | undefined;
}

export async function startWorker(stack: Stack, queue: Queue, job: AnyDefinition, s: WorkerSettings): Promise<Worker> {
  const worker = built.createWorker(
    {
      queues: [queue.url],
      jobs: [job],
      concurrency: s.concurrency,
      waitTimeSeconds: s.waitTimeSeconds,
      ...(s.receiveConcurrency === undefined ? {} : { receiveConcurrency: s.receiveConcurrency }),
      ...(s.maxHeldBatchItems === undefined ? {} : { maxHeldBatchItems: s.maxHeldBatchItems }),
      ...(s.prefetch === undefined ? {} : { prefetch: s.prefetch }),
      visibilityTimeoutSeconds: s.visibilityTimeoutSeconds ?? 30,
      endpoint: stack.proxy.url,
      region: 'us-east-1',
      memcached: MEMCACHED,
      metrics: { sink: new EmfSink(() => {}) },
      logger: pino({ level: 'silent' }),
      handleSignals: false,
    },
    FAKE_CREDENTIALS,
  );
  worker.on('error', (e) => console.error(`  worker error: ${e.message}`));
  await worker.start();
  return worker;
}
