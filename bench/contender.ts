/**
 * One contender in a child process, so its CPU and heap are its own. Argument: JSON
 * { contender, queueUrl, endpoint, expect, concurrency, visibilityTimeout, heartbeatSeconds, memcached }.
 * Messages carry {"args":{"ms":N}}: each handler waits N ms (0 = no-op).
 * IPC to the parent: {type:'ready'}, {type:'progress', processed, held}, {type:'done', ...figures}.
 */
import { type HeapPoint, leastHeapAfterGc, leastSquaresSlope } from './lib/heap-slope.js';
import { mkdirSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
import { Consumer } from 'sqs-consumer';
import { z } from 'zod';

import { built, EmfSink, RECEIVE_ATTRIBUTES } from './lib/built.js';
import { startProfiler } from './lib/cpu-profile.js';

const { createWorker, defineJob } = built;

export type ContenderName = 'sqs-jobs' | 'sqs-consumer' | 'sqs-consumer-batch10' | 'raw-sdk';

interface Spec {
  contender: ContenderName;
  queueUrl: string;
  endpoint: string;
  expect: number;
  concurrency: number;
  visibilityTimeout: number;
  heartbeatSeconds: number | undefined;
  memcached: string | undefined;
  /** Handlers wait until the parent says 'release' (heap and shutdown runs). */
  hold: boolean;
  prefetch: number | undefined;
  /** sqs-jobs: metrics aggregated (false: off). Default true. */
  metrics?: boolean;
  /** Profile the CPU from 'ready' to 'done' and write it to `${profile}-<time>.cpuprofile`. */
  profile?: string;
  /** sqs-jobs: OpenTelemetry off (as an app without the API: the default), on with the API and no SDK, or with the SDK recording every span. */
  tracing?: 'off' | 'api' | 'sdk';
  /** Each handler also spins the CPU this many µs (a handler that computes). */
  busyMicros?: number;
  /** raw-sdk: receive with the attributes and visibility timeout sqs-jobs asks for. */
  askAsSqsJobs?: boolean;
}

const spec = JSON.parse(process.argv[2]!) as Spec;
/** Where BENCH_HEAP_SNAPSHOTS=1 writes its snapshots (bench/results/ is not committed). */
const HEAP_SNAPSHOTS = 'bench/results/heap';
const send = (m: object) => process.send?.(m);
const workMs = (body: string | undefined) => {
  try {
    return Number((JSON.parse(body ?? '{}') as { args?: { ms?: number } }).args?.ms ?? 0);
  } catch {
    return 0;
  }
};
let released: () => void = () => {};
const gate = new Promise<void>((resolve) => (released = resolve));
process.on('message', (m: { type?: string }) => m.type === 'release' && released());

let processed = 0;
let held = 0;
let startCpu = process.cpuUsage();
let startedAt = performance.now();
let finished = false;
async function handle(ms: number, signal?: AbortSignal, wait = gate): Promise<void> {
  held++;
  if (spec.busyMicros) for (const until = performance.now() + spec.busyMicros / 1000; performance.now() < until; );
  if (spec.hold) await wait;
  if (ms > 0) await sleep(ms, undefined, signal ? { signal } : {});
  held--;
  processed++;
  if (processed % 100 === 0 || processed === spec.expect) send({ type: 'progress', processed, held });
  if (processed >= spec.expect && !finished) {
    finished = true;
    const cpu = process.cpuUsage(startCpu);
    const elapsedMs = performance.now() - startedAt;
    if (profiler !== undefined) await profiler.save();
    send({ type: 'done', processed, elapsedMs, cpuMicros: cpu.user + cpu.system });
  }
}

const client = () =>
  new SQSClient({ endpoint: spec.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
let stop: () => Promise<void>;

if (spec.tracing === 'sdk') await registerTracingSdk();

if (spec.contender === 'sqs-jobs') {
  // A handler that waits honours its signal; a no-op one never reads it (so none is made for it).
  const job = defineJob({
    name: 'bench',
    args: z.object({ ms: z.number() }),
    handle: (a, ctx) => handle(a.ms, a.ms > 0 ? ctx.signal : undefined),
  });
  const worker = createWorker(
    {
      queues: [spec.queueUrl],
      jobs: [job],
      concurrency: spec.concurrency,
      prefetch: spec.prefetch ?? Math.min(10, spec.concurrency),
      visibilityTimeoutSeconds: spec.visibilityTimeout,
      ...(spec.heartbeatSeconds === undefined ? {} : { heartbeatIntervalMs: spec.heartbeatSeconds * 1000 }),
      endpoint: spec.endpoint,
      region: 'us-east-1',
      ...(spec.memcached === undefined ? {} : { memcached: spec.memcached }),
      // Metrics aggregated and serialised, the lines going nowhere; or off.
      metrics: spec.metrics === false ? { sink: 'off' } : { sink: new EmfSink(() => {}) },
      logger: pino({ level: 'silent' }),
      handleSignals: true,
      // Off: as for an app without @opentelemetry/api (this repo has it, for its tests).
      tracing: (spec.tracing ?? 'off') !== 'off',
    },
    { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' },
  );
  worker.on('stopped', () => {
    send({ type: 'stopped' });
    setImmediate(() => process.exit(0));
  });
  await worker.start();
  stop = () => worker.stop();
} else if (spec.contender === 'raw-sdk') {
  // The floor: receive 10, run them, delete them in one batch, repeat.
  const sqs = client();
  let running = true;
  const loop = (async () => {
    while (running) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: spec.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 20,
          // What sqs-jobs asks for with each receive, to see what reading it costs.
          ...(spec.askAsSqsJobs === true ? { VisibilityTimeout: spec.visibilityTimeout, ...RECEIVE_ATTRIBUTES } : {}),
        }),
      );
      const messages = out.Messages ?? [];
      await Promise.all(messages.map((m) => handle(workMs(m.Body))));
      if (messages.length > 0) {
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: spec.queueUrl,
            Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
      }
    }
  })();
  stop = async () => {
    running = false;
    await loop;
  };
} else {
  const consumer = Consumer.create({
    queueUrl: spec.queueUrl,
    sqs: client(),
    ...(spec.contender === 'sqs-consumer-batch10' ? { batchSize: 10 } : {}),
    visibilityTimeout: spec.visibilityTimeout,
    ...(spec.heartbeatSeconds === undefined ? {} : { heartbeatInterval: spec.heartbeatSeconds }),
    handleMessage: async (m) => {
      await handle(workMs(m.Body));
      return m;
    },
  });
  consumer.on('error', () => {});
  consumer.on('processing_error', () => {});
  consumer.start();
  stop = async () => {
    consumer.stop({ abort: false });
    await new Promise<void>((resolve) => (consumer.status.isRunning ? consumer.once('stopped', () => resolve()) : resolve()));
  };
}

process.on('message', (m: { type?: string; count?: number }) => {
  if (m.type === 'handler-heap') send({ type: 'handler-heap', perCall: handlerHeap(m.count!) });
  if (m.type === 'heap') {
    (globalThis as { gc?: () => void }).gc?.();
    send({ type: 'heap', heapUsed: process.memoryUsage().heapUsed, held });
  }
  if (m.type === 'snapshot') {
    (globalThis as { gc?: () => void }).gc?.();
    mkdirSync(HEAP_SNAPSHOTS, { recursive: true });
    send({ type: 'snapshot', path: writeHeapSnapshot(`${HEAP_SNAPSHOTS}/held-${held}.heapsnapshot`), held });
  }
  if (m.type === 'cpu') {
    const cpu = process.cpuUsage(startCpu);
    send({ type: 'cpu', cpuMicros: cpu.user + cpu.system, processed });
  }
  if (m.type === 'stop') void stop().then(() => send({ type: 'stopped' }));
});
const profile = spec.profile;
const profiler = profile === undefined ? undefined : await startProfiler(() => `${profile}-${Date.now()}.cpuprofile`);
startCpu = process.cpuUsage();
startedAt = performance.now();
send({ type: 'ready' });

/**
 * The OpenTelemetry SDK as an app would register it (AsyncLocalStorage context, every span
 * sampled, a batch processor), exporting to nowhere: what recording the spans costs, not sending them.
 */
async function registerTracingSdk(): Promise<void> {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const discard = { export: (_spans: unknown[], done: (r: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discard)] }));
}

/**
 * Heap per pending call of the bench handler alone: `count` calls in four levels, each awaiting a
 * gate that never opens, as a held job's handler awaits; the slope, after which they are dropped.
 */
function handlerHeap(count: number): number {
  const never = new Promise<void>(() => {});
  const pending: Promise<void>[] = [];
  const points: HeapPoint[] = [];
  for (let level = 1; level <= 4; level++) {
    while (pending.length < (count / 4) * level) pending.push(handle(0, undefined, never));
    points.push({ held: pending.length, heapUsed: leastHeapAfterGc() });
  }
  held -= pending.length;
  return leastSquaresSlope(points);
}
