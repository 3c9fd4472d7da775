/**
 * `npm run bench`: sqs-jobs against bbc/sqs-consumer (and a raw SDK loop) on ElasticMQ, behind a
 * proxy that counts every SQS call, on this machine, in one run, contenders alternating. Prints
 * the machine, the versions, a table with ratios, and writes bench/results/latest.json.
 * BENCH_QUICK=1 runs smaller counts (for a smoke run).
 */
import { leastSquaresSlope } from './lib/heap-slope.js';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { GetQueueAttributesCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createQueues } from '../src/ops/wiring.js';
import type { ContenderName } from './contender.js';
import { bucketTable, cpuBuckets } from './lib/cpu-profile.js';
import { SqsProxy } from './lib/sqs-proxy.js';

const QUICK = process.env.BENCH_QUICK === '1';
/** BENCH_ONLY=noop,heavy,heap,heartbeat,shutdown,scale runs a subset. */
const ONLY = new Set((process.env.BENCH_ONLY ?? 'noop,heavy,heap,heartbeat,shutdown,scale').split(','));
/** BENCH_PROFILE=1: the no-op runs of sqs-jobs profiled from 'ready' to 'done', and where their CPU went per message. */
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILES = 'bench/results/profiles';
/** BENCH_HEAP_SNAPSHOTS=1: the heap run writes a V8 heap snapshot at half and at full (compare them in DevTools). */
const HEAP_SNAPSHOTS = process.env.BENCH_HEAP_SNAPSHOTS === '1';
/**
 * BENCH_BASELINE=<tree>: the same runs of sqs-jobs with that tree's build too (its dist/, built
 * first: `npm run build` there), alternated with this tree's in the no-op runs and measured after
 * it in the heap run, each figure printed beside it as a ratio (a change to the worker against the
 * commit before it).
 */
const BASELINE = process.env.BENCH_BASELINE === undefined ? undefined : join(resolve(process.env.BENCH_BASELINE), 'dist');
const EMQ = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9324';
const MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211';
const direct = new SQSClient({ endpoint: EMQ, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const proxy = await SqsProxy.start(EMQ);

let queueSeq = 0;
/** Job ids are dedupe keys: new ones every run, or memcached would skip them as already done. */
const RUN = Date.now().toString(36);
let jobSeq = 0;
async function freshQueue(visibilityTimeout: number): Promise<string> {
  const pair = await createQueues(direct, {
    name: `bench-${Date.now().toString(36)}-${queueSeq++}`,
    visibilityTimeout,
    maxReceiveCount: 5,
  });
  return pair.queueUrl.replace(EMQ, proxy.url);
}

/** Put n envelopes in the queue (straight to ElasticMQ, not counted); message i works msFor(i) ms. */
async function fill(queueUrl: string, n: number, msFor: (i: number) => number = () => 0): Promise<void> {
  const url = queueUrl.replace(proxy.url, EMQ);
  const batches: Promise<unknown>[] = [];
  for (let i = 0; i < n; i += 10) {
    const entries = Array.from({ length: Math.min(10, n - i) }, (_, j) => {
      const k = i + j;
      const body = JSON.stringify({
        v: 1,
        id: `${RUN}-${jobSeq++}`,
        job: 'bench',
        args: { ms: msFor(k) },
        enqueuedAt: new Date().toISOString(),
      });
      return { Id: String(j), MessageBody: body, MessageAttributes: { 'sqsjobs-job': { DataType: 'String', StringValue: 'bench' } } };
    });
    batches.push(direct.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: entries })));
    if (batches.length >= 16) await Promise.all(batches.splice(0));
  }
  await Promise.all(batches);
}

async function depth(queueUrl: string): Promise<{ visible: number; inFlight: number }> {
  const out = await direct.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl.replace(proxy.url, EMQ),
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(out.Attributes?.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

interface Run {
  child: ChildProcess;
  next: (type: string) => Promise<Record<string, number>>;
  exited: Promise<number | null>;
}

function start(contender: ContenderName, spec: Record<string, unknown>): Run {
  const child = fork(
    'bench/contender.ts',
    [
      JSON.stringify({
        contender,
        endpoint: proxy.url,
        memcached: MEMCACHED,
        visibilityTimeout: 30,
        concurrency: 10,
        hold: false,
        ...spec,
      }),
    ],
    {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: {
        ...process.env,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...(spec.baseline === true && BASELINE !== undefined ? { BENCH_DIST: BASELINE } : {}),
      },
    },
  );
  const waiting = new Map<string, { resolve: (m: Record<string, number>) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { type: string } & Record<string, number>) => {
    waiting.get(m.type)?.resolve(m);
    waiting.delete(m.type);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      // A contender that dies answers nothing more: fail whatever waits on it instead of hanging.
      for (const [type, w] of waiting) w.reject(new Error(`${contender} exited (code ${code}) while the bench waited for '${type}'`));
      waiting.clear();
      resolve(code);
    }),
  );
  return { child, exited, next: (type) => new Promise((resolve, reject) => waiting.set(type, { resolve, reject })) };
}

interface Figures {
  messages: number;
  calls: number;
  callsPerMessage: number;
  perSecond: number;
  cpuMicrosPerMessage: number;
  visibilityCallsPerMessage: number;
  /** TCP connections the contender opened to SQS during its run. */
  connections: number;
}

/** Fill a queue, run one contender until it has handled them all, stop it, count. */
async function measure(
  contender: ContenderName,
  n: number,
  spec: Record<string, unknown> = {},
  msFor?: (i: number) => number,
): Promise<Figures> {
  const queueUrl = await freshQueue(Number(spec.visibilityTimeout ?? 30));
  await fill(queueUrl, n, msFor);
  proxy.resetCounts();
  const run = start(contender, { queueUrl, expect: n, ...spec });
  await run.next('ready');
  const done = await run.next('done');
  run.child.send({ type: 'stop' });
  await Promise.race([run.next('stopped').catch(() => {}), new Promise((r) => setTimeout(r, 30_000))]);
  run.child.kill('SIGKILL');
  await run.exited;
  const calls = proxy.total();
  return {
    messages: n,
    calls,
    callsPerMessage: calls / n,
    perSecond: n / (done.elapsedMs! / 1000),
    cpuMicrosPerMessage: done.cpuMicros! / n,
    visibilityCallsPerMessage: proxy.total((a) => a.startsWith('ChangeMessageVisibility')) / n,
    connections: proxy.connectionsOpened,
  };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
function average(runs: Figures[]): Figures {
  const keys = Object.keys(runs[0]!) as (keyof Figures)[];
  return Object.fromEntries(keys.map((k) => [k, mean(runs.map((r) => r[k]))])) as unknown as Figures;
}

/** Run each contender `rounds` times, alternating, and average each one's figures. */
async function alternate(
  contenders: [label: string, name: ContenderName, spec: Record<string, unknown>][],
  rounds: number,
  n: number,
  msFor?: (i: number) => number,
  /** Where each round's figures are kept too (for medians). */
  each = new Map<string, Figures[]>(),
) {
  for (let r = 0; r < rounds; r++) {
    // Every other round in reverse (ABBA): a server still warming up, or a host slowing down,
    // favours neither end of the list.
    for (const [label, name, spec] of r % 2 === 0 ? contenders : [...contenders].reverse()) {
      const f = await measure(name, n, spec, msFor);
      each.set(label, [...(each.get(label) ?? []), f]);
      console.error(
        `  ${label.padEnd(28)} round ${r + 1}: ${f.perSecond.toFixed(0)} msg/s, ${f.callsPerMessage.toFixed(3)} calls/msg, ${f.cpuMicrosPerMessage.toFixed(0)} µs CPU/msg, ${f.connections} connections`,
      );
    }
  }
  return new Map([...each].map(([label, fs]) => [label, average(fs)]));
}

/** Where the profiled no-op runs' CPU went, µs per message (each profile covers its runs' `messages`). */
function profileTable(messages: number): string[] {
  const columns = [
    ['sqs-jobs-on', 'sqs-jobs, dedupe+metrics on'],
    ['sqs-jobs-off', 'off'],
    ['raw-sdk', 'raw SDK loop'],
  ].map(([name, label]) => {
    const files = readdirSync(PROFILES).filter((f) => f.startsWith(name!));
    const total = new Map<string, number>();
    for (const f of files) for (const [bucket, us] of cpuBuckets(`${PROFILES}/${f}`)) total.set(bucket, (total.get(bucket) ?? 0) + us);
    return { label: label!, buckets: total, per: messages };
  });
  return bucketTable('CPU µs / message by where it went (V8 profiler self time, ready to done)', columns);
}

if (PROFILE) {
  rmSync(PROFILES, { recursive: true, force: true });
  mkdirSync(PROFILES, { recursive: true });
}
const results: Record<string, unknown> = {};
const lines: string[] = [];
const fmt = (n: number, d = 2) => n.toFixed(d);

// 1. No-op handler: SQS calls per message, throughput, CPU per message.
if (ONLY.has('noop')) {
  const N = QUICK ? 500 : 3_000;
  console.error(`no-op handler, ${N} messages, 2 rounds (after an untimed warm-up of ElasticMQ)`);
  // ElasticMQ's JVM is still compiling during the first run of a fresh server: whoever goes first would pay for it.
  await measure('raw-sdk', N);
  const profiled = (name: string) => (PROFILE ? { profile: `${PROFILES}/${name}` } : {});
  const noop = await alternate(
    [
      ['sqs-jobs (dedupe+metrics on)', 'sqs-jobs', { memcached: MEMCACHED, ...profiled('sqs-jobs-on') }],
      ['sqs-jobs (dedupe+metrics off)', 'sqs-jobs', { memcached: undefined, metrics: false, ...profiled('sqs-jobs-off') }],
      ['sqs-jobs (on, tracing: API, no SDK)', 'sqs-jobs', { memcached: MEMCACHED, tracing: 'api' }],
      ['sqs-jobs (on, tracing: SDK recording)', 'sqs-jobs', { memcached: MEMCACHED, tracing: 'sdk' }],
      ['sqs-consumer (defaults)', 'sqs-consumer', {}],
      ['sqs-consumer batchSize 10', 'sqs-consumer-batch10', {}],
      ['raw SDK loop (receive 10, delete batch)', 'raw-sdk', { ...profiled('raw-sdk') }],
      ['raw SDK loop, receiving what sqs-jobs asks for', 'raw-sdk', { askAsSqsJobs: true }],
    ],
    2,
    N,
  );
  results.noop = Object.fromEntries(noop);
  const ours = noop.get('sqs-jobs (dedupe+metrics on)')!;
  const raw = noop.get('raw SDK loop (receive 10, delete batch)')!;
  lines.push(`| no-op handler, ${N} messages | SQS calls / message | messages / s | CPU µs / message | CPU vs the raw SDK loop |`);
  lines.push('|---|---|---|---|---|');
  for (const [label, f] of noop) {
    const ratio = label.startsWith('sqs-jobs') ? '' : ` (sqs-jobs ${fmt(f.callsPerMessage / ours.callsPerMessage, 1)}× fewer)`;
    lines.push(
      `| ${label} | ${fmt(f.callsPerMessage, 3)}${ratio} | ${fmt(f.perSecond, 0)} | ${fmt(f.cpuMicrosPerMessage, 0)} | ${fmt(f.cpuMicrosPerMessage / raw.cpuMicrosPerMessage, 2)}× |`,
    );
  }
  if (PROFILE) lines.push('', ...profileTable(N * 2));
}

// 1b. Against a baseline build (BENCH_BASELINE): this tree and that one side by side, CPU per
// message with dedupe and metrics on and off, each figure the median of three rounds.
if (ONLY.has('noop') && BASELINE !== undefined) {
  const N = QUICK ? 500 : 3_000;
  console.error(`against the baseline ${process.env.BENCH_BASELINE}: no-op handler, ${N} messages, 3 rounds (ABBA)`);
  const each = new Map<string, Figures[]>();
  await alternate(
    [
      ['sqs-jobs (dedupe+metrics on)', 'sqs-jobs', { memcached: MEMCACHED }],
      ['baseline (dedupe+metrics on)', 'sqs-jobs', { memcached: MEMCACHED, baseline: true }],
      ['sqs-jobs (dedupe+metrics off)', 'sqs-jobs', { memcached: undefined, metrics: false }],
      ['baseline (dedupe+metrics off)', 'sqs-jobs', { memcached: undefined, metrics: false, baseline: true }],
    ],
    3,
    N,
    undefined,
    each,
  );
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cpu = (fs: Figures[]) => median(fs.map((f) => f.cpuMicrosPerMessage));
  const calls = (fs: Figures[]) => median(fs.map((f) => f.callsPerMessage));
  results.baseline = Object.fromEntries(each);
  lines.push(
    '',
    `| against the baseline (${process.env.BENCH_BASELINE}), no-op, median of 3 | CPU µs / message, this tree | baseline | this tree / baseline | SQS calls / message |`,
    '|---|---|---|---|---|',
  );
  for (const mode of ['on', 'off'] as const) {
    const now = each.get(`sqs-jobs (dedupe+metrics ${mode})`)!;
    const before = each.get(`baseline (dedupe+metrics ${mode})`)!;
    lines.push(
      `| dedupe+metrics ${mode} | ${fmt(cpu(now), 0)} | ${fmt(cpu(before), 0)} | ${fmt(cpu(now) / cpu(before), 2)}× | ${fmt(calls(now), 3)} / ${fmt(calls(before), 3)} |`,
    );
  }
}

// 2. Heavy-tailed handler: 90% 10 ms, 10% 1 s, concurrency 10.
if (ONLY.has('heavy')) {
  const H = QUICK ? 100 : 300;
  const slowEvery = (i: number) => ((i * 7919) % 10 === 0 ? 1_000 : 10); // the same 10% are slow for everyone
  console.error(`heavy-tailed handler, ${H} messages`);
  const heavy = await alternate(
    [
      ['sqs-jobs concurrency 10', 'sqs-jobs', { concurrency: 10, memcached: MEMCACHED }],
      ['sqs-consumer batchSize 10', 'sqs-consumer-batch10', {}],
    ],
    1,
    H,
    slowEvery,
  );
  results.heavyTailed = Object.fromEntries(heavy);
  const hOurs = heavy.get('sqs-jobs concurrency 10')!;
  const hPeer = heavy.get('sqs-consumer batchSize 10')!;
  lines.push('', `| heavy-tailed handler (90% 10 ms, 10% 1 s), ${H} messages | messages / s |`, '|---|---|');
  lines.push(`| sqs-jobs concurrency 10 | ${fmt(hOurs.perSecond, 1)} (${fmt(hOurs.perSecond / hPeer.perSecond, 1)}× sqs-consumer) |`);
  lines.push(`| sqs-consumer batchSize 10 | ${fmt(hPeer.perSecond, 1)} |`);
}

// 3. Heap per in-flight message at 1,000 held: the slope from 250 to 1,000, so fixed costs
// (lazily loaded SDK code, sockets, buffers) are not spread over the messages.
if (ONLY.has('heap')) {
  const held = QUICK ? 400 : 1_000;
  const bodyBytes = Buffer.byteLength(
    JSON.stringify({ v: 1, id: `${RUN}-00-000`, job: 'bench', args: { ms: 0 }, enqueuedAt: new Date().toISOString() }),
  );
  const slope = async (
    contender: ContenderName,
    spec: Record<string, unknown>,
  ): Promise<{ from: number; to: number; perMessage: number; handlerBytes: number }> => {
    console.error(`heap with ${held} messages in flight: ${contender}`);
    const queueUrl = await freshQueue(300);
    const run = start(contender, { queueUrl, expect: held, hold: true, visibilityTimeout: 300, ...spec });
    await run.next('ready');
    // The bench handler's own pending call (its async frame and promise, awaiting the gate),
    // measured the same way in the same process before anything is received: the part of a held
    // job that is the handler's, not the framework's.
    run.child.send({ type: 'handler-heap', count: held });
    const handlerBytes = (await run.next('handler-heap')).perCall!;
    const heldHeap = async (target: number) => {
      let now: Record<string, number> = { held: 0, heapUsed: 0 };
      for (let i = 0; i < 600 && now.held! < target; i++) {
        if (i % 50 === 49) console.error(`  waiting: ${now.held} of ${target} held`);
        await new Promise((r) => setTimeout(r, 100));
        run.child.send({ type: 'heap' });
        now = await run.next('heap');
      }
      // The least of five readings, 300 ms apart: one may catch a receive, a heartbeat or a metrics flush in flight.
      let least = now;
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 300));
        run.child.send({ type: 'heap' });
        const reading = await run.next('heap');
        if (reading.heapUsed! < least.heapUsed!) least = reading;
      }
      return least;
    };
    const snapshot = async (at: string) => {
      if (!HEAP_SNAPSHOTS) return;
      run.child.send({ type: 'snapshot' });
      const written = (await run.next('snapshot')) as unknown as { path: string; held: number };
      console.error(`  heap snapshot at ${written.held} held (${at}): ${written.path}`);
    };
    // Four levels, a quarter apart, and the least-squares slope through them: one reading at each of
    // two levels swung by ±150 B a message between runs (a hash table or a buffer growing between them).
    const points: { held: number; heapUsed: number }[] = [];
    for (let level = 1; level <= 4; level++) {
      await fill(queueUrl, held / 4, () => 0);
      const at = await heldHeap((held / 4) * level);
      points.push({ held: at.held!, heapUsed: at.heapUsed! });
      if (level === 2) await snapshot('half');
    }
    await snapshot('full');
    run.child.send({ type: 'release' });
    await run.next('done');
    run.child.send({ type: 'stop' });
    await Promise.race([run.exited, new Promise((r) => setTimeout(r, 30_000))]);
    run.child.kill('SIGKILL');
    return { from: points[0]!.held, to: points[3]!.held, perMessage: leastSquaresSlope(points), handlerBytes };
  };
  const ours = await slope('sqs-jobs', { concurrency: held, prefetch: 0, memcached: MEMCACHED });
  const before =
    BASELINE === undefined ? undefined : await slope('sqs-jobs', { concurrency: held, prefetch: 0, memcached: MEMCACHED, baseline: true });
  // The body as V8 keeps it (a one-byte string: a 16 B header, its bytes rounded up to 8), which
  // the message holds until it is settled (a re-send or the DLQ sends it as received).
  const bodyHeap = 16 + Math.ceil(bodyBytes / 8) * 8;
  const ownBeyondBodyBytes = ours.perMessage - ours.handlerBytes - bodyHeap;
  results.heap = { held: ours.to, perMessageBytes: ours.perMessage, handlerBytes: ours.handlerBytes, bodyBytes, ownBeyondBodyBytes };
  lines.push(
    '',
    `| heap per in-flight message (least-squares slope over 4 levels from ${ours.from} to ${ours.to} held, after GC; body ${bodyBytes} B) | bytes |`,
    '|---|---|',
  );
  lines.push(`| sqs-jobs: running handler, lease, heartbeat entry, dedupe lock, context, metrics | ${fmt(ours.perMessage, 0)} |`);
  lines.push(
    `| of which the bench handler's own pending call (its async frame and promise, measured alone) | ${fmt(ours.handlerBytes, 0)} |`,
  );
  lines.push(`| sqs-jobs' own, per held job | ${fmt(ours.perMessage - ours.handlerBytes, 0)} |`);
  lines.push(
    `| sqs-jobs' own beyond the body (its ${bodyBytes} B held as a ${bodyHeap} B string; goal ≤ 2,048) | ${fmt(ownBeyondBodyBytes, 0)} |`,
  );
  if (before !== undefined) {
    const beforeOwn = before.perMessage - before.handlerBytes - bodyHeap;
    lines.push(
      `| baseline (${process.env.BENCH_BASELINE}): its own beyond the body; this tree / baseline | ${fmt(beforeOwn, 0)}; ${fmt(ownBeyondBodyBytes / beforeOwn, 2)}× |`,
    );
  }
  // sqs-consumer is not measured here: it holds at most one batch per Consumer, so holding 1,000
  // takes 100+ Consumers whose idle long polls come and go with the load, and the slope measures
  // those rather than the messages (it came out negative).
}

// 4. Heartbeat cost: long jobs on a short visibility timeout (5 min on 60 s, scaled to 20 s on 4 s).
if (ONLY.has('heartbeat')) {
  const n = 20;
  console.error(`heartbeat cost, ${n} jobs of 20 s on a 4 s visibility timeout, heartbeat every 2 s`);
  const hb = await alternate(
    [
      ['sqs-jobs (batched heartbeat)', 'sqs-jobs', { concurrency: 20, visibilityTimeout: 4, heartbeatSeconds: 2, memcached: MEMCACHED }],
      ['sqs-consumer batchSize 10 (per-message heartbeat)', 'sqs-consumer-batch10', { visibilityTimeout: 4, heartbeatSeconds: 2 }],
    ],
    1,
    n,
    () => 20_000,
  );
  results.heartbeat = Object.fromEntries(hb);
  const a = hb.get('sqs-jobs (batched heartbeat)')!;
  const b = hb.get('sqs-consumer batchSize 10 (per-message heartbeat)')!;
  lines.push(
    '',
    `| heartbeat: ${n} jobs of 20 s, visibility 4 s, extend every 2 s | visibility calls / message | all calls / message |`,
    '|---|---|---|',
  );
  lines.push(
    `| sqs-jobs (batched) | ${fmt(a.visibilityCallsPerMessage)} (${fmt(b.visibilityCallsPerMessage / a.visibilityCallsPerMessage, 1)}× fewer) | ${fmt(a.callsPerMessage)} |`,
  );
  lines.push(`| sqs-consumer batchSize 10 | ${fmt(b.visibilityCallsPerMessage)} | ${fmt(b.callsPerMessage)} |`);
}

// 5. Shutdown with 200 messages held: 10 running (3 s jobs), 190 prefetched.
if (ONLY.has('shutdown')) {
  console.error('shutdown with 200 messages held');
  const queueUrl = await freshQueue(60);
  await fill(queueUrl, 200, () => 3_000);
  const run = start('sqs-jobs', { queueUrl, expect: 200, concurrency: 10, prefetch: 190, visibilityTimeout: 60 });
  await run.next('ready');
  for (let i = 0; i < 300 && (await depth(queueUrl)).inFlight < 200; i++) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
  const t0 = performance.now();
  run.child.kill('SIGTERM');
  let visibleAt = Number.NaN;
  const exitedAt = run.exited.then(() => performance.now());
  for (let i = 0; i < 600; i++) {
    if ((await depth(queueUrl)).visible >= 190) {
      visibleAt = performance.now();
      break;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const exit = await exitedAt;
  results.shutdown = { releasedMs: visibleAt - t0, exitMs: exit - t0 };
  lines.push('', '| shutdown with 200 held (10 running 3 s jobs, 190 prefetched) | ms after SIGTERM |', '|---|---|');
  lines.push(`| the 190 unstarted visible to other consumers | ${fmt(visibleAt - t0, 0)} |`);
  lines.push(`| process exited (running jobs finished and deleted) | ${fmt(exit - t0, 0)} |`);
}

// 6. Scaling: 1, 2 and 4 worker processes on one queue, straight to ElasticMQ (the counting proxy
// is one process and would be the limit). A raw SDK loop per process alongside shows where
// ElasticMQ, not the worker, limits; a handler that computes 1 ms shows where the cores do.
if (ONLY.has('scale')) {
  const S = QUICK ? 2_000 : 8_000;
  const workloads: [label: string, busyMicros: number][] = [
    ['no-op', 0],
    ['1 ms of CPU', 1_000],
  ];
  const counts = [1, 2, 4];
  const table = new Map<string, { perSecond: number; cpuMicrosPerMessage: number }>();
  const key = (w: string, c: string, p: number) => `${w}|${c}|${p}`;
  for (const [workload, busyMicros] of workloads) {
    for (const procs of counts) {
      for (const [label, contender, spec] of [
        ['sqs-jobs', 'sqs-jobs', { memcached: MEMCACHED }],
        ['raw SDK loop', 'raw-sdk', {}],
      ] as [string, ContenderName, Record<string, unknown>][]) {
        const queueUrl = (await freshQueue(30)).replace(proxy.url, EMQ);
        const n = busyMicros > 0 ? S / 4 : S;
        await fill(queueUrl, n);
        const runs = Array.from({ length: procs }, () =>
          start(contender, { queueUrl, endpoint: EMQ, expect: Number.MAX_SAFE_INTEGER, busyMicros, ...spec }),
        );
        await Promise.all(runs.map((r) => r.next('ready')));
        const t0 = performance.now();
        for (let i = 0; i < 6_000; i++) {
          const d = await depth(queueUrl);
          if (d.visible + d.inFlight === 0) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const seconds = (performance.now() - t0) / 1000;
        const cpu = await Promise.all(
          runs.map((r) => {
            r.child.send({ type: 'cpu' });
            return r.next('cpu');
          }),
        );
        for (const r of runs) r.child.send({ type: 'stop' });
        await Promise.race([Promise.all(runs.map((r) => r.exited)), new Promise((r) => setTimeout(r, 30_000))]);
        for (const r of runs) r.child.kill('SIGKILL');
        const f = { perSecond: n / seconds, cpuMicrosPerMessage: cpu.reduce((a, c) => a + c.cpuMicros!, 0) / n };
        table.set(key(workload, label, procs), f);
        console.error(
          `  ${workload}, ${label}, ${procs} process(es): ${f.perSecond.toFixed(0)} msg/s, ${f.cpuMicrosPerMessage.toFixed(0)} µs CPU/msg`,
        );
      }
    }
  }
  results.scale = Object.fromEntries(table);
  lines.push(
    '',
    `| scaling on ${cpus().length} cores (straight to ElasticMQ) | processes | sqs-jobs msg/s | vs 1 process | raw SDK loop msg/s | sqs-jobs vs raw |`,
    '|---|---|---|---|---|---|',
  );
  for (const [workload] of workloads) {
    for (const procs of counts) {
      const ours = table.get(key(workload, 'sqs-jobs', procs))!;
      const raw = table.get(key(workload, 'raw SDK loop', procs))!;
      const one = table.get(key(workload, 'sqs-jobs', 1))!;
      lines.push(
        `| ${workload} | ${procs} | ${fmt(ours.perSecond, 0)} | ${fmt(ours.perSecond / one.perSecond)}× | ${fmt(raw.perSecond, 0)} | ${fmt(ours.perSecond / raw.perSecond)}× |`,
      );
    }
  }
}

const consumerVersion = (JSON.parse(readFileSync('node_modules/sqs-consumer/package.json', 'utf8')) as { version: string }).version;
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ElasticMQ 1.7.1, sqs-consumer ${consumerVersion}${QUICK ? ' (BENCH_QUICK)' : ''}`;
results.machine = machine;
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/latest.json', `${JSON.stringify(results, null, 2)}\n`);
console.log(`\n${machine}\n`);
console.log(lines.join('\n'));
await proxy.close();
direct.destroy();
process.exit(0);
