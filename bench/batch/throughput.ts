/**
 * Scenarios 1 and 2: 20,000 items over 50 keys, a downstream that costs 5 ms + 0.1 ms per item
 * per call. The same items, in the same run, through (a) an sqs-jobs batch job keyed by the item's
 * key, (b) an sqs-jobs job per item, (c) sqs-consumer handleMessageBatch (batchSize 10), per key
 * and whole batch. Downstream calls per item, wall time, and the SQS calls each made (proxy).
 */
import { Downstream } from './downstream.js';
import { type ConsumerMode, startConsumers } from './consumer.js';
import { batchJob, type ItemArgs, makeItems, singleJob } from './jobs.js';
import { type Queue, type Stack, waitFor } from './stack.js';
import { Tally } from './tally.js';
import { startWorker } from './worker.js';
import { mean, percentile } from './stats.js';
import { startProfiler } from '../lib/cpu-profile.js';
import { serverCpuSince } from '../lib/server-cpu.js';

export const THROUGHPUT = {
  keys: 50,
  maxSize: 500,
  maxWaitMs: 1_000,
  concurrency: 10,
  /** Long-poll wait for every contender here (the queue is full until the end; it only bounds how long stop() waits). */
  waitTimeSeconds: 5,
  consumers: 10,
} as const;

export type ContenderId =
  | 'batch'
  | 'batch-1r'
  | 'batch-4r'
  | 'per-item'
  | 'per-item-1r'
  | 'per-item-prefetch'
  | 'consumer-per-key'
  | 'consumer-whole-batch';

/** Prefetch of the (b″) contender: enough for ten 5 ms handlers across a 20 ms round trip. */
const DEEP_PREFETCH = 100;

export const LABELS: Record<ContenderId, string> = {
  batch: `(a) sqs-jobs defineBatchJob (key, maxSize ${THROUGHPUT.maxSize}, maxWaitMs ${THROUGHPUT.maxWaitMs})`,
  'batch-1r': "(a') the same with receiveConcurrency 1 (one long poll per queue)",
  'batch-4r': "(a″) the same with receiveConcurrency 4 (the default before issue 22's thirteenth step)",
  'per-item': '(b) sqs-jobs defineJob, one call per item',
  'per-item-1r': "(b') the same with receiveConcurrency 1",
  'per-item-prefetch': `(b″) the same as (b) with prefetch ${DEEP_PREFETCH} (default 10)`,
  'consumer-per-key': '(c) sqs-consumer batchSize 10, one call per key in the batch',
  'consumer-whole-batch': "(c') sqs-consumer batchSize 10, one call per batch (mixed keys)",
};

export interface ContenderResult {
  readonly id: ContenderId;
  readonly items: number;
  readonly downstreamCalls: number;
  readonly downstreamCallsPerItem: number;
  readonly itemsPerCall: { readonly mean: number; readonly p50: number; readonly max: number };
  readonly maxDownstreamInFlight: number;
  readonly wallMs: number;
  readonly itemsPerSecond: number;
  /** This process's CPU (the contender, and the counting proxy every contender shares) per item. */
  readonly cpuMicrosPerItem: number;
  /** The share of the run this process's event loop was busy (1: it, not SQS, was the limit). */
  readonly eventLoopBusy: number;
  /** The CPU each loopback server this bench started (ElasticMQ, memcached) spent meanwhile, per item (server-cpu.ts). */
  readonly serverCpuMicrosPerItem: Record<string, number>;
  readonly repeated: number;
  readonly sqsCalls: number;
  readonly sqsCallsPerItem: number;
  readonly sqsByAction: Record<string, number>;
  /** BATCH_PROFILE=1: the V8 CPU profile of this process from the contender's start to its last item. */
  readonly profile?: string;
}

type Stop = () => Promise<void>;

/** The contenders that set receiveConcurrency; the others take the default (up to 10, opened as receives come back full). */
const RECEIVE_CONCURRENCY: Partial<Record<ContenderId, number>> = { 'batch-1r': 1, 'batch-4r': 4, 'per-item-1r': 1 };

/** Start one contender on a filled queue; it reports each finished item to the tally. */
async function start(id: ContenderId, stack: Stack, queue: Queue, downstream: Downstream, tally: Tally): Promise<Stop> {
  const settings = {
    concurrency: THROUGHPUT.concurrency,
    waitTimeSeconds: THROUGHPUT.waitTimeSeconds,
    receiveConcurrency: RECEIVE_CONCURRENCY[id],
  };
  if (id === 'batch' || id === 'batch-1r' || id === 'batch-4r') {
    const worker = await startWorker(stack, queue, contenderJob('batch', downstream, tally), settings);
    return () => worker.stop();
  }
  if (id === 'per-item' || id === 'per-item-1r' || id === 'per-item-prefetch') {
    const prefetch = id === 'per-item-prefetch' ? DEEP_PREFETCH : undefined;
    const worker = await startWorker(stack, queue, contenderJob('per-item', downstream, tally), {
      ...settings,
      prefetch,
    });
    return () => worker.stop();
  }
  const mode: ConsumerMode = id === 'consumer-per-key' ? 'per-key' : 'whole-batch';
  const consumers = startConsumers(stack.proxy.url, queue.url, THROUGHPUT.consumers, mode, downstream, (i: ItemArgs) => tally.done(i.seq));
  return () => consumers.stop();
}

function contenderJob(kind: 'batch' | 'per-item', downstream: Downstream, tally: Tally) {
  if (kind === 'per-item') {
    return singleJob(async (args) => {
      await downstream.call(1);
      tally.done(args.seq);
    });
  }
  return batchJob({
    maxSize: THROUGHPUT.maxSize,
    maxWaitMs: THROUGHPUT.maxWaitMs,
    handle: async (items) => {
      await downstream.call(items.length); // one key per batch: one downstream call
      for (const i of items) tally.done(i.args.seq);
    },
  });
}

/** Fill a fresh queue with the items, run one contender until every item is done and deleted, count. */
export async function runContender(stack: Stack, id: ContenderId, n: number, profileTo?: string): Promise<ContenderResult> {
  const items = makeItems(n, THROUGHPUT.keys);
  const queue = await stack.freshQueue(id);
  // The producer only needs the job's name and schema; either definition will do for filling.
  const definition = id.startsWith('per-item')
    ? singleJob(async () => {})
    : batchJob({ maxSize: 1, maxWaitMs: 0, handle: () => undefined });
  await stack.fill(queue, definition, items);
  const downstream = new Downstream();
  const tally = new Tally(n);
  stack.proxy.resetCounts();
  const profiler = profileTo === undefined ? undefined : await startProfiler(() => `${profileTo}/${id}.cpuprofile`);
  const servers = serverCpuSince();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  const stop = await start(id, stack, queue, downstream, tally);
  await waitFor(() => tally.complete, `${id}: every item handled`, 600_000);
  const wallMs = tally.lastAt - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const serverMicros = servers();
  const profile = await profiler?.save();
  await stack.drained(queue.directUrl);
  await stop();
  const sqsCalls = stack.proxy.total();
  return {
    id,
    items: n,
    downstreamCalls: downstream.calls,
    downstreamCallsPerItem: downstream.calls / n,
    itemsPerCall: { mean: mean(downstream.sizes), p50: percentile(downstream.sizes, 50), max: Math.max(...downstream.sizes) },
    maxDownstreamInFlight: downstream.maxInFlight,
    wallMs,
    itemsPerSecond: n / (wallMs / 1000),
    cpuMicrosPerItem: (cpu.user + cpu.system) / n,
    eventLoopBusy: elu.utilization,
    serverCpuMicrosPerItem: Object.fromEntries(Object.entries(serverMicros).map(([name, us]) => [name, us / n])),
    repeated: tally.repeated,
    sqsCalls,
    sqsCallsPerItem: sqsCalls / n,
    sqsByAction: stack.proxy.counts(),
    ...(profile === undefined ? {} : { profile }),
  };
}
