/**
 * One sqs-jobs worker for bench/pause in a process of its own, so its CPU is its own. Argument:
 * JSON Spec. Every worker has the job store (which keeps the pauses) and a memcached lock; only
 * `pauses` differs between the contenders. The handler is a no-op. It counts the jobs it started
 * and, with `record` (the fleet), keeps in epoch ms each start, each message found paused
 * (job:waiting or job:deferred with limit 'paused'), and each receive it asks SQS for (the time it
 * asked, the messages it got); its pause watch's memcached gets and store reads are counted.
 * IPC: {type:'ready'} once started; {type:'take'} answers {type:'taken', ...Taken}: the counts and
 * its CPU so far, and what it kept since the last take; {type:'stop'} stops it. It exits when its
 * parent goes.
 */
import { pino } from 'pino';
import type { QueuePort } from '../../src/adapters/index.js';
import {
  createDynamoClient,
  createSqsClient,
  createWorker,
  DynamoJobStore,
  defineJob,
  ENV,
  JOB,
  MemcachedLock,
  type Servers,
  SqsQueuePort,
  workArgs,
} from './parts.js';

export interface Spec extends Servers {
  readonly queueUrl: string;
  readonly pauses: boolean;
  readonly concurrency: number;
  readonly record: boolean;
}

/** What a worker counted so far, and (`record`) kept since the last take. */
export interface Taken {
  readonly handled: number;
  readonly cpuMicros: number;
  readonly gets: number;
  readonly reads: number;
  readonly starts: number[];
  /** [epoch ms, 'waiting' | 'deferred'] */
  readonly paused: [number, string][];
  /** [epoch ms asked, messages received] */
  readonly receives: [number, number][];
}

const spec = JSON.parse(process.argv[2]!) as Spec;
const send = (m: object) => process.send?.(m);
process.on('disconnect', () => process.exit(0)); // the bench died: never outlive it

let handled = 0;
let starts: number[] = [];
let paused: [number, string][] = [];
let receives: [number, number][] = [];
let gets = 0;
let reads = 0;

function onStart(): void {
  handled++;
  if (spec.record) starts.push(Date.now());
}

const lock = new MemcachedLock({ servers: spec.memcached, keyPrefix: spec.prefix });
const store = new DynamoJobStore({
  client: createDynamoClient({ endpoint: spec.dynamodb, region: 'us-east-1' }, {}, ENV),
  table: spec.table,
  ttlSeconds: 3_600,
});
let queue: QueuePort | undefined;
if (spec.record) {
  // The watch's own calls, counted where it makes them.
  const seen = lock.controls.seen.bind(lock.controls);
  lock.controls.seen = () => {
    gets++;
    return seen();
  };
  const readPauses = store.controls.readPauses.bind(store.controls);
  store.controls.readPauses = () => {
    reads++;
    return readPauses();
  };
  // SQS clients as the worker makes its own (wiring.ts), the receives timed.
  const at = { endpoint: spec.sqs, region: 'us-east-1' };
  const port = new SqsQueuePort(
    createSqsClient(at, { maxSockets: 20, requestTimeoutMs: 30_000 }, ENV),
    createSqsClient(at, { maxSockets: 50, requestTimeoutMs: 10_000 }, ENV),
  );
  const receive = port.receive.bind(port);
  port.receive = async (...args) => {
    const asked = Date.now();
    const got = await receive(...args);
    receives.push([asked, got.length]);
    return got;
  };
  queue = port;
}

const worker = createWorker(
  {
    queues: [spec.queueUrl],
    jobs: [defineJob({ name: JOB, args: workArgs, handle: () => onStart() })],
    concurrency: spec.concurrency,
    store,
    lock,
    pauses: spec.pauses,
    ...(queue === undefined ? { endpoint: spec.sqs, region: 'us-east-1' } : { queue }),
    metrics: { sink: 'off' },
    tracing: false,
    handleSignals: false,
    shutdownTimeoutMs: 5_000,
    logger: pino({ level: 'silent' }),
  },
  ENV,
);
if (spec.record) {
  const kept = (kind: string) => (e: { limit: string; jobName: string }) => {
    if (e.limit === 'paused' && e.jobName === JOB) paused.push([Date.now(), kind]);
  };
  worker.on('job:waiting', kept('waiting'));
  worker.on('job:deferred', kept('deferred'));
}
process.on('message', (m: { type?: string }) => {
  if (m.type === 'take') {
    const cpu = process.cpuUsage();
    const taken: Taken = { handled, cpuMicros: cpu.user + cpu.system, gets, reads, starts, paused, receives };
    [starts, paused, receives] = [[], [], []];
    send({ type: 'taken', ...taken });
  } else if (m.type === 'stop') {
    // The worker closes the lock; the process's exit closes the rest.
    void worker
      .stop()
      .catch(() => {})
      .finally(() => process.exit(0));
  }
});
// A fleet's workers start at unrelated times, and so do their watches' one-second ticks.
if (spec.record) await new Promise((resolve) => setTimeout(resolve, Math.random() * 1_000));
await worker.start();
send({ type: 'ready' });
