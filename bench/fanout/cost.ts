/**
 * (a) What the job store costs: DynamoDB calls per tracked job and per fan-out child, counted by
 * wrapping DynamoDBClient.send of the store the producer and the worker are given (a DynamoJobStore
 * on a client of ours): logical calls by operation, plus the SDK's retries ($metadata.attempts - 1)
 * and the calls that failed (a conditional write that did not apply is one: ConditionalCheckFailed).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { pino } from 'pino';
import { z } from 'zod';
import { DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import type { AnyDefinition } from '../../src/core/job.js';
import { createProducer, createWorker, defineJob, fanOutResultSchema, type Worker } from '../../src/index.js';
import { CREDENTIALS, EMQ, freshQueue, MEMCACHED, waitFor } from './stack.js';

/** A DynamoDB client whose send() counts each call by operation. */
export class CountingDynamo {
  readonly client: DynamoDBClient;
  readonly calls: Record<string, number> = {};
  readonly failed: Record<string, number> = {};
  retries = 0;

  constructor(endpoint: string) {
    this.client = createDynamoClient({ endpoint, region: 'us-east-1' }, { maxSockets: 50, requestTimeoutMs: 10_000 }, CREDENTIALS);
    const send = this.client.send.bind(this.client) as (command: unknown) => Promise<{ $metadata?: { attempts?: number } }>;
    this.client.send = (async (command: { constructor: { name: string } }) => {
      const op = command.constructor.name.replace(/Command$/, '');
      this.calls[op] = (this.calls[op] ?? 0) + 1;
      try {
        const out = await send(command);
        this.retries += Math.max(0, (out.$metadata?.attempts ?? 1) - 1);
        return out;
      } catch (error) {
        const key = `${op}: ${(error as Error).name}`;
        this.failed[key] = (this.failed[key] ?? 0) + 1;
        throw error;
      }
    }) as DynamoDBClient['send'];
  }

  store(table: string): DynamoJobStore {
    return new DynamoJobStore({ client: this.client, table, ttlSeconds: 86_400 });
  }

  total(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  close(): void {
    this.client.destroy();
  }
}

export const WRITES = new Set(['UpdateItem', 'PutItem', 'TransactWriteItems', 'DeleteItem', 'BatchWriteItem']);

function perJob(calls: Record<string, number>, n: number): Record<string, number> {
  return Object.fromEntries(Object.entries(calls).map(([op, c]) => [op, round(c / n)]));
}

const round = (x: number) => Math.round(x * 1000) / 1000;

function writesOf(calls: Record<string, number>): number {
  return Object.entries(calls).reduce((a, [op, c]) => a + (WRITES.has(op) ? c : 0), 0);
}

async function worker(queueUrl: string, jobs: AnyDefinition[], store: DynamoJobStore): Promise<Worker> {
  const w = createWorker(
    {
      queues: [queueUrl],
      jobs,
      concurrency: 10,
      waitTimeSeconds: 1,
      endpoint: EMQ,
      region: 'us-east-1',
      memcached: MEMCACHED,
      lockKeyPrefix: `bf-cost-${Date.now().toString(36)}:`,
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
      handleSignals: false,
      store,
    },
    CREDENTIALS,
  );
  w.on('error', (e) => console.error(`  worker error: ${e.message}`));
  await w.start();
  return w;
}

export interface TrackedCost {
  readonly jobs: number;
  readonly producer: Record<string, number>;
  readonly worker: Record<string, number>;
  readonly producerPerJob: Record<string, number>;
  readonly workerPerJob: Record<string, number>;
  readonly writesPerJob: number;
  readonly readsPerJob: number;
  readonly failed: Record<string, number>;
  readonly retries: number;
}

/** K tracked no-op jobs that succeed first time: waiting (producer), running and completed (worker). */
export async function trackedCost(endpoint: string, table: string, k: number): Promise<TrackedCost> {
  const queueUrl = await freshQueue('cost-tracked');
  const job = defineJob({ name: 'cost-noop', args: z.object({ n: z.number() }), handle: () => {} });
  const p = new CountingDynamo(endpoint);
  const w = new CountingDynamo(endpoint);
  const producer = createProducer({ queueUrl, endpoint: EMQ, region: 'us-east-1', store: p.store(table) }, CREDENTIALS);
  await producer.enqueueMany(
    job,
    Array.from({ length: k }, (_, n) => ({ n })),
    { track: true },
  );
  producer.close();
  let succeeded = 0;
  const wk = await worker(queueUrl, [job], w.store(table));
  wk.on('job:succeeded', () => succeeded++);
  await waitFor(() => succeeded >= k, `${k} tracked jobs`, 300_000);
  // The completed writes are not awaited by the worker: wait for them to land.
  await waitFor(() => (w.calls.UpdateItem ?? 0) >= 2 * k, 'the completed writes', 30_000).catch(() => {});
  await wk.stop();
  const calls = { ...p.calls };
  for (const [op, c] of Object.entries(w.calls)) calls[op] = (calls[op] ?? 0) + c;
  const reads = (calls.GetItem ?? 0) + (calls.Query ?? 0) + (calls.BatchGetItem ?? 0);
  const result = {
    jobs: k,
    producer: { ...p.calls },
    worker: { ...w.calls },
    producerPerJob: perJob(p.calls, k),
    workerPerJob: perJob(w.calls, k),
    writesPerJob: round(writesOf(calls) / k),
    readsPerJob: round(reads / k),
    failed: { ...p.failed, ...w.failed },
    retries: p.retries + w.retries,
  };
  p.close();
  w.close();
  return result;
}

export interface ChildCost {
  readonly children: number;
  readonly chunkSize: number;
  readonly calls: Record<string, number>;
  readonly transactWritesPerChild: number;
  readonly getItemsPerChild: number;
  /** Everything else: the parent's openFanOut, cursor saves, the completion's claim and its sent mark. */
  readonly otherCalls: Record<string, number>;
  readonly failed: Record<string, number>;
  readonly retries: number;
  readonly completionRuns: number;
}

/** One untracked parent fanning out K untracked no-op children with a completion; the worker's store calls. */
export async function childCost(endpoint: string, table: string, k: number, chunkSize: number): Promise<ChildCost> {
  const queueUrl = await freshQueue('cost-fanout');
  let completions = 0;
  const child = defineJob({ name: 'cost-child', args: z.object({ n: z.number() }), handle: () => {} });
  const done = defineJob({ name: 'cost-done', args: fanOutResultSchema, handle: () => void completions++ });
  const parent = defineJob({
    name: 'cost-parent',
    args: z.object({ k: z.number() }),
    handle: (a, ctx) =>
      ctx.fanOut(
        child,
        Array.from({ length: a.k }, (_, n) => ({ n })),
        { onComplete: { job: done }, chunkSize },
      ),
  });
  const w = new CountingDynamo(endpoint);
  const producer = createProducer({ queueUrl, endpoint: EMQ, region: 'us-east-1' }, CREDENTIALS);
  await producer.enqueue(parent, { k });
  producer.close();
  const wk = await worker(queueUrl, [parent, child, done], w.store(table));
  await waitFor(() => completions >= 1, 'the completion job', 300_000);
  await new Promise((r) => setTimeout(r, 1_000));
  await wk.stop();
  const calls = { ...w.calls };
  const { TransactWriteItems: _t, GetItem: _g, ...other } = calls;
  const result = {
    children: k,
    chunkSize,
    calls,
    transactWritesPerChild: round((calls.TransactWriteItems ?? 0) / k),
    getItemsPerChild: round((calls.GetItem ?? 0) / k),
    otherCalls: Object.fromEntries(Object.entries(other).filter(([, c]) => c !== 0)),
    failed: { ...w.failed },
    retries: w.retries,
    completionRuns: completions,
  };
  w.close();
  return result;
}
