/**
 * `npm run bench:keys [-- --quick]`: what keys on enqueue cost, counted on the SDK clients
 * (counting.ts) of one producer and two workers with `schedules: true` in this process (stack.ts),
 * on run.sh's servers of its own on loopback; beside a plain enqueue and a `track: true` one in the
 * same run, the baseline of every ratio (a plain enqueue is 1 SendMessage):
 *   1. per enqueue (producer only, each scenario on keys of its own, N enqueues one after the
 *      other): plain, track; throttle (the window's first, within the window, the next window);
 *      singleton (key free, holder waiting, holder ended, `replace`); debounce (a burst's first
 *      enqueue, its next ones, the first after the key's run);
 *   2. per run (producer and workers, each scenario on its own so that its calls are its own): a
 *      plain job, a tracked one, and debounced bursts of 50 (one key in a row, twice; 20 keys at
 *      once; 3 keys 10 enqueues at a time; one key tracked); the workers' calls for the runs apart
 *      from their idle ones (the ticks' empty Query pages, empty long polls, the pause watch);
 *      then the gap check: 6 enqueues 1.5 s apart with delaySeconds 2, one burst by the option's
 *      word, and how many runs it made (a warning, not a failure: it is the code's, not the bench's);
 *   3. idle: the ticks' Query pages a second, fleet-wide and by family of shards, nothing due.
 * Checked (the bench fails, exit 1, otherwise): each enqueue's answer (sent, throttled, skipped,
 * replaced, debounced under the burst's job id); each debounced burst ran once, with its last args,
 * never before its quiet time was over; no SDK retries. Prints the tables; writes
 * bench/keys/results/latest.json. --quick: N = 20, bursts of 20, 5 keys at once, 5 s idle.
 * About 1 min 25 s (--quick: 55 s), besides the servers' start.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import type { EnqueueResult } from '../../src/producer/options.js';
import { type Call, idle } from './counting.js';
import { byCommand, type Cost, costOf, f, percentile, perMillion, ratio, units } from './figures.js';
import { buildStack, type Run } from './stack.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const QUICK = values.quick || process.env.BENCH_QUICK === '1';
/** Enqueues per per-enqueue scenario; a burst's enqueues; debounced keys at once; runs of a plain and a tracked job; idle window. */
const N = QUICK ? 20 : 50;
const BURST = QUICK ? 20 : 50;
const KEYS_AT_ONCE = QUICK ? 5 : 20;
const WAVE = 10;
const WAVE_KEYS = 3;
const SINGLE_RUNS = QUICK ? 3 : 5;
const IDLE_S = QUICK ? 5 : 20;
/** A burst's quiet time: 2 s, not 1, so that a burst of enqueues made one after the other (~10 ms apart) is never cut by a tick (see the gap check). */
const DELAY_S = 2;
/** The gap check: enqueues this far apart, under DELAY_S, are one burst. */
const GAP_MS = 1_500;
const GAP_ENQUEUES = 6;

const SQS = process.env.KEYS_SQS ?? 'http://127.0.0.1:9744';
const DYNAMODB = process.env.KEYS_DYNAMODB ?? 'http://127.0.0.1:4789';
const MEMCACHED = process.env.KEYS_MEMCACHED ?? '127.0.0.1:11744';
for (const url of [SQS, DYNAMODB, `http://${MEMCACHED}`])
  if (!/^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url)) throw new Error(`loopback only: ${url}`);
for (const port of [SQS, DYNAMODB, `http://${MEMCACHED}`].map((u) => Number(u.split(':').pop())))
  if ([4566, 4567, 4569, 11211, 9734, 4779, 11734].includes(port))
    throw new Error(`port ${port} belongs to the test stack or bench:pause: use another`);

const t0 = performance.now();
const say = (line: string) => console.error(`[bench:keys] ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s ${line}`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
async function waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > until) return false;
    await sleep(50);
  }
  return true;
}

const problems: string[] = [];
const problem = (line: string) => {
  problems.push(line);
  say(`PROBLEM: ${line}`);
};

const s = await buildStack({ sqs: SQS, dynamodb: DYNAMODB, memcached: MEMCACHED });
const { log, job } = s;
const producerCalls = (from: number, to?: number) => log.since(from, to).filter((c) => c.who === 'producer');
const workerCalls = (from: number, to?: number) => log.since(from, to).filter((c) => c.who !== 'producer');
const runsOf = (key: string) => s.runs.filter((r) => r.key === key);

// Warm-up: a job through each worker, so that the lock's record of when memcached began keeping its
// data is older than what is measured (a message sent within 5 s of it has its cancel looked up in the store).
say('warm-up: the workers start, a few plain jobs run');
for (let i = 0; i < 4; i++) await s.b.enqueue(job, { key: 'warm-up', i });
if (!(await waitFor(() => runsOf('warm-up').length >= 4, 20_000))) problem('warm-up: the workers did not run the warm-up jobs');
const warmedAt = Date.now();

// ---- 1. per enqueue ----------------------------------------------------------------------------
interface EnqueueRow {
  readonly label: string;
  readonly n: number;
  readonly calls: Call[];
}
const enqueueRows: EnqueueRow[] = [];

/** `n` enqueues one after the other, the producer's calls counted; `expect` says what is wrong with an answer. */
async function perEnqueue(
  label: string,
  n: number,
  one: (i: number) => Promise<EnqueueResult>,
  expect: (r: EnqueueResult, i: number) => string | undefined,
): Promise<EnqueueResult[]> {
  const from = log.mark();
  const results: EnqueueResult[] = [];
  for (let i = 0; i < n; i++) results.push(await one(i));
  enqueueRows.push({ label, n, calls: producerCalls(from) });
  const wrong = results.map((r, i) => expect(r, i)).filter((x) => x !== undefined);
  if (wrong.length > 0) problem(`${label}: ${wrong.length} of ${n} answers wrong, first: ${wrong[0]}`);
  return results;
}
const answer = (want: EnqueueResult['key'], jobId?: string) => (r: EnqueueResult) =>
  r.key !== want
    ? `key ${r.key}, expected ${want}`
    : jobId !== undefined && r.jobId !== jobId
      ? `job ${r.jobId}, expected ${jobId}`
      : undefined;
const a = s.a;
const W = 60; // a throttle window that outlasts its scenario

say(`1. per enqueue, ${N} of each, producer only (queue A, never received from)`);
await perEnqueue(
  'plain `enqueue` (the baseline)',
  N,
  (i) => a.enqueue(job, { key: 'plain', i }),
  (r) => (r.messageId === undefined ? 'no message id' : undefined),
);
await perEnqueue(
  '`track: true`',
  N,
  (i) => a.enqueue(job, { key: 'track', i }, { track: true }),
  (r) => (r.messageId === undefined ? 'no message id' : undefined),
);

const throttle = (key: string, windowSeconds = W) => ({ throttle: { key, windowSeconds } });
await perEnqueue(
  'throttle: the window’s first (key free) → sent',
  N,
  (i) => a.enqueue(job, { key: 'thr', i }, throttle(`free-${i}`)),
  answer('sent'),
);
const held = await a.enqueue(job, { key: 'thr', i: -1 }, throttle('held'));
await perEnqueue(
  'throttle: within the window (one key) → throttled',
  N,
  (i) => a.enqueue(job, { key: 'thr', i }, throttle('held')),
  answer('throttled', held.jobId),
);
for (let i = 0; i < N; i++) await a.enqueue(job, { key: 'thr', i }, throttle(`next-${i}`, 1));
await sleep(1_100);
await perEnqueue(
  'throttle: the next window (its last ended) → sent',
  N,
  (i) => a.enqueue(job, { key: 'thr', i }, throttle(`next-${i}`, 1)),
  answer('sent'),
);

const singleton = (key: string, mode: 'skip' | 'replace' = 'skip') => ({ singleton: { key, mode } });
await perEnqueue('singleton: key free → sent', N, (i) => a.enqueue(job, { key: 'sgl', i }, singleton(`free-${i}`)), answer('sent'));
const holder = await a.enqueue(job, { key: 'sgl', i: -1 }, singleton('held'));
await perEnqueue(
  'singleton: its holder waiting → skipped',
  N,
  (i) => a.enqueue(job, { key: 'sgl', i }, singleton('held')),
  answer('skipped', holder.jobId),
);
const ended: string[] = [];
for (let i = 0; i < N; i++) ended.push((await a.enqueue(job, { key: 'sgl', i: -1 }, singleton(`ended-${i}`))).jobId);
// Their holders ran: their records read `completed` (written here, on an uncounted client, as a worker would).
for (const jobId of ended) await s.plainStore.transition({ jobId, jobName: job.name, state: 'completed', attempt: 1, at: new Date() });
await perEnqueue(
  'singleton: its holder ended (`completed`) → sent',
  N,
  (i) => a.enqueue(job, { key: 'sgl', i }, singleton(`ended-${i}`)),
  (r, i) => answer('sent')(r) ?? (r.jobId === ended[i] ? 'the ended holder’s job id' : undefined),
);
await a.enqueue(job, { key: 'sgl', i: -1 }, singleton('replace', 'replace'));
await perEnqueue(
  'singleton `replace`: its holder waiting → replaced',
  N,
  (i) => a.enqueue(job, { key: 'sgl', i }, singleton('replace', 'replace')),
  answer('replaced'),
);

// Debounce's first enqueues, on queue A: N keys, each a burst of one; the ticks send them there
// (nobody receives them), then each key again: a new burst, the last one's job gone.
const debounce = (key: string, delaySeconds = DELAY_S) => ({ debounce: { key, delaySeconds } });
/** The workers' sends to queue A (debounced jobs of queue A's producer, sent by their ticks). */
const sentToA = () => log.calls.filter((c) => c.who !== 'producer' && c.op === 'SendMessage' && c.on.startsWith('bench-keys-a-')).length;
const firsts = await perEnqueue(
  'debounce: a burst’s first enqueue (key never used)',
  N,
  (i) => a.enqueue(job, { key: 'deb', i }, debounce(`first-${i}`)),
  answer('debounced'),
);
if (!(await waitFor(() => sentToA() >= N, 20_000))) problem(`debounce on queue A: ${sentToA()} of ${N} bursts sent by the ticks`);
await perEnqueue(
  'debounce: a burst’s first enqueue after the key’s last run',
  N,
  (i) => a.enqueue(job, { key: 'deb', i }, debounce(`first-${i}`)),
  (r, i) => answer('debounced')(r) ?? (r.jobId === firsts[i]!.jobId ? 'the last burst’s job id' : undefined),
);
if (!(await waitFor(() => sentToA() >= 2 * N, 20_000))) problem(`debounce on queue A: ${sentToA()} of ${2 * N} bursts sent by the ticks`);

// ---- 2. per run ----------------------------------------------------------------------------------
interface RunRow {
  readonly label: string;
  readonly runs: number;
  readonly enqueues: number;
  readonly producer: Call[];
  /** The workers' calls for the runs, their idle ones apart. */
  readonly worker: Call[];
  /** A debounced run's start after its quiet time ended (its last enqueue + DELAY_S), ms. */
  readonly lateMs: number[];
}
const runRows: RunRow[] = [];
const nextEnqueues: Call[] = [];
const b = s.b;

// The warm-up's 5 s margin past, and what queue A's scenarios sent settled.
await sleep(Math.max(1_000, warmedAt + 6_000 - Date.now()));
say(`2. per run (queue B, 2 workers with schedules: true): ${SINGLE_RUNS} plain and ${SINGLE_RUNS} tracked jobs, one at a time`);
for (const tracked of [false, true]) {
  const key = tracked ? 'run-tracked' : 'run-plain';
  const from = log.mark();
  for (let i = 0; i < SINGLE_RUNS; i++) {
    await b.enqueue(job, { key, i }, tracked ? { track: true } : {});
    if (!(await waitFor(() => runsOf(key).length > i, 15_000))) problem(`${key}: job ${i} did not run`);
    await sleep(600); // its delete (and status writes) flushed
  }
  const calls = log.since(from);
  runRows.push({
    label: tracked ? '`track: true`' : 'plain `enqueue` (the baseline)',
    runs: SINGLE_RUNS,
    enqueues: 1,
    producer: calls.filter((c) => c.who === 'producer'),
    worker: calls.filter((c) => c.who !== 'producer' && !idle(c)),
    lateMs: [],
  });
}

/** Check that `key`'s bursts ran once each, with one of `lastArgs` (each burst's last, or its last wave), never early. */
function checkRuns(label: string, key: string, bursts: { jobId: string; last: number[]; quietFromMs: number }[]): number[] {
  const runs = runsOf(key);
  const late: number[] = [];
  for (const burst of bursts) {
    const mine = runs.filter((r) => r.jobId === burst.jobId);
    if (mine.length !== 1) {
      problem(`${label}: burst ${burst.jobId} ran ${mine.length} times, expected once`);
      continue;
    }
    const run = mine[0]!;
    if (!burst.last.includes(run.i))
      problem(`${label}: burst ${burst.jobId} ran with args i=${run.i}, expected ${burst.last.join(' or ')}`);
    if (run.startMs < burst.quietFromMs)
      problem(`${label}: burst ${burst.jobId} started ${burst.quietFromMs - run.startMs} ms before its quiet time was over`);
    late.push(run.startMs - burst.quietFromMs);
  }
  const strays = runs.filter((r) => !bursts.some((x) => x.jobId === r.jobId));
  if (strays.length > 0) problem(`${label}: ${strays.length} runs under other job ids (${strays.map((r) => r.jobId).join(', ')})`);
  return late;
}

/** One burst of `count` enqueues of `key`, `atOnce` at a time; its job id, its last wave's args, and when its quiet time began. */
async function burst(key: string, count: number, atOnce = 1, opts: { track?: boolean } = {}, perCall?: (i: number, from: number) => void) {
  let jobId: string | undefined;
  let lastStart = 0;
  let last: number[] = [];
  for (let i = 0; i < count; i += atOnce) {
    const wave = Array.from({ length: Math.min(atOnce, count - i) }, (_, k) => i + k);
    lastStart = Date.now();
    const from = log.mark();
    const results = await Promise.all(wave.map((k) => b.enqueue(job, { key, i: k }, { ...debounce(key), ...opts })));
    perCall?.(i, from);
    for (const r of results) {
      if (r.key !== 'debounced') problem(`debounce ${key}: answered ${r.key}, expected debounced`);
      jobId ??= r.jobId;
      if (r.jobId !== jobId) problem(`debounce ${key}: one burst answered two job ids (${jobId}, ${r.jobId})`);
    }
    last = wave;
  }
  // Its time is its last enqueue's (the last wave's earliest call: a later one only moves it later) + DELAY_S.
  return { jobId: jobId!, last, quietFromMs: lastStart + DELAY_S * 1000 };
}

/** Run `bursts` (concurrently), wait for their runs, check them; one row. */
async function runRow(label: string, key: string, keys: number, make: (key: string) => ReturnType<typeof burst>) {
  const from = log.mark();
  const made = await Promise.all(Array.from({ length: keys }, (_, k) => make(keys === 1 ? key : `${key}-${k}`)));
  const all = () => made.every((m) => s.runs.some((r) => r.jobId === m.jobId));
  if (!(await waitFor(all, DELAY_S * 1000 + 15_000)))
    problem(`${label}: ${made.filter((m) => !s.runs.some((r) => r.jobId === m.jobId)).length} of ${keys} bursts did not run`);
  await sleep(1_500); // a second run would show by now; the deletes flushed
  const late = made.flatMap((m, k) => checkRuns(label, keys === 1 ? key : `${key}-${k}`, [m]));
  return { made, late, calls: log.since(from) };
}

say(`   debounce: one key, ${BURST} enqueues in a row (delaySeconds ${DELAY_S}), twice`);
{
  const key = 'deb-row';
  const from = log.mark();
  const bursts: { jobId: string; last: number[]; quietFromMs: number }[] = [];
  for (let round = 0; round < 2; round++) {
    const made = await burst(key, BURST, 1, {}, (i, at) => {
      if (i > 0) nextEnqueues.push(...producerCalls(at));
    });
    bursts.push(made);
    if (!(await waitFor(() => s.runs.some((r) => r.jobId === made.jobId), DELAY_S * 1000 + 15_000)))
      problem(`${key}: burst ${round + 1} did not run`);
    await sleep(1_500);
  }
  if (bursts[0]!.jobId === bursts[1]!.jobId) problem(`${key}: the second burst kept the first's job id`);
  const late = checkRuns(`debounce ${key}`, key, bursts);
  const calls = log.since(from);
  runRows.push({
    label: `debounce: one key, ${BURST} enqueues in a row`,
    runs: 2,
    enqueues: BURST,
    producer: calls.filter((c) => c.who === 'producer'),
    worker: calls.filter((c) => c.who !== 'producer' && !idle(c)),
    lateMs: late,
  });
}
enqueueRows.splice(enqueueRows.length - 1, 0, {
  label: 'debounce: the burst’s next enqueues (its job kept)',
  n: 2 * (BURST - 1),
  calls: nextEnqueues,
});

say(`   debounce: ${KEYS_AT_ONCE} keys at once, ${BURST} enqueues each in a row`);
{
  const { late, calls } = await runRow(`debounce ${KEYS_AT_ONCE} keys`, 'deb-keys', KEYS_AT_ONCE, (key) => burst(key, BURST));
  runRows.push({
    label: `debounce: ${KEYS_AT_ONCE} keys at once, ${BURST} enqueues each in a row`,
    runs: KEYS_AT_ONCE,
    enqueues: BURST,
    producer: calls.filter((c) => c.who === 'producer'),
    worker: calls.filter((c) => c.who !== 'producer' && !idle(c)),
    lateMs: late,
  });
}
say(`   debounce: ${WAVE_KEYS} keys at once, ${BURST} enqueues each ${WAVE} at a time`);
{
  // How many of a wave's first reads find no burst yet (then a refused transaction, a read and an
  // update again) depends on the order the store answers them in: several keys, to average it.
  const { late, calls } = await runRow('debounce at once', 'deb-wave', WAVE_KEYS, (key) => burst(key, BURST, WAVE));
  enqueueRows.push({
    label: `debounce: one key, ${WAVE} enqueues at once (${WAVE_KEYS} bursts of ${BURST})`,
    n: WAVE_KEYS * BURST,
    calls: calls.filter((c) => c.who === 'producer'),
  });
  runRows.push({
    label: `debounce: ${WAVE_KEYS} keys, ${BURST} enqueues each ${WAVE} at a time`,
    runs: WAVE_KEYS,
    enqueues: BURST,
    producer: calls.filter((c) => c.who === 'producer'),
    worker: calls.filter((c) => c.who !== 'producer' && !idle(c)),
    lateMs: late,
  });
}
say(`   debounce: one key, ${BURST} enqueues in a row, track: true`);
{
  const { late, calls, made } = await runRow('debounce tracked', 'deb-tracked', 1, (key) => burst(key, BURST, 1, { track: true }));
  const record = await s.plainStore.get(made[0]!.jobId);
  if (record?.state !== 'completed') problem(`debounce tracked: its record reads ${record?.state ?? 'nothing'}, expected completed`);
  runRows.push({
    label: `debounce: one key, ${BURST} enqueues in a row, \`track: true\``,
    runs: 1,
    enqueues: BURST,
    producer: calls.filter((c) => c.who === 'producer'),
    worker: calls.filter((c) => c.who !== 'producer' && !idle(c)),
    lateMs: late,
  });
}

// The gap check: enqueues GAP_MS apart, under delaySeconds: one burst by the option's word.
say(`   debounce: one key, ${GAP_ENQUEUES} enqueues ${GAP_MS} ms apart (delaySeconds ${DELAY_S}): one burst?`);
const gapKey = 'deb-gap';
const gapIds = new Set<string>();
for (let i = 0; i < GAP_ENQUEUES; i++) {
  if (i > 0) await sleep(GAP_MS);
  gapIds.add((await b.enqueue(job, { key: gapKey, i }, debounce(gapKey))).jobId);
}
await waitFor(() => runsOf(gapKey).some((r) => r.i === GAP_ENQUEUES - 1), DELAY_S * 1000 + 15_000);
await sleep(1_500);
const gapRuns = runsOf(gapKey);
if (gapRuns.length !== 1)
  problem(
    `${GAP_ENQUEUES} enqueues ${GAP_MS} ms apart with delaySeconds ${DELAY_S} ran ${gapRuns.length} times (args i = ${gapRuns.map((r) => r.i).join(', ')}), expected once`,
  );

// ---- 3. idle ------------------------------------------------------------------------------------
say(`3. idle: ${IDLE_S} s with nothing due`);
await sleep(1_000);
const idleFrom = log.mark();
const idleT0 = Date.now();
await sleep(IDLE_S * 1000);
const idleS = (Date.now() - idleT0) / 1000;
const idleCalls = workerCalls(idleFrom);

const retries = log.retries();
for (const r of retries) problem(`the SDK retried: ${r}`);
await s.close();

// ---- the report ---------------------------------------------------------------------------------
const base = costOf(enqueueRows[0]!.calls, enqueueRows[0]!.n);
const calls = (c: Cost) => c.dynamo + c.sqs;
const enqueueTable = [
  `| per enqueue (producer), ${N} each | DynamoDB calls / enqueue, by command | SQS calls / enqueue | write / read units | calls ÷ plain | $ / M enqueues | $ ÷ plain |`,
  '|---|---|---|---|---|---|---|',
  ...enqueueRows.map((r) => {
    const c = costOf(r.calls, r.n);
    const dynamo = r.calls.filter((x) => x.service === 'dynamodb');
    return `| ${r.label} | ${f(c.dynamo)}${dynamo.length > 0 ? ` (${byCommand(dynamo, r.n)})` : ''} | ${f(c.sqs)} | ${units(c)} | ${ratio(calls(c), calls(base))} | ${perMillion(c.dollars)} | ${ratio(c.dollars, base.dollars)} |`;
  }),
];

const runBase = (() => {
  const r = runRows[0]!;
  return costOf([...r.producer, ...r.worker], r.runs);
})();
const runTable = [
  '| per run (producer + workers) | runs | enqueues / run | producer: DynamoDB + SQS calls / run | workers: DynamoDB calls / run, by command | workers: SQS calls / run, by command | write / read units / run | calls ÷ plain | $ / M runs | $ ÷ plain |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...runRows.map((r) => {
    const p = costOf(r.producer, r.runs);
    const all = costOf([...r.producer, ...r.worker], r.runs);
    const wd = r.worker.filter((x) => x.service === 'dynamodb');
    const ws = r.worker.filter((x) => x.service === 'sqs');
    return `| ${r.label} | ${r.runs} | ${r.enqueues} | ${f(p.dynamo)} + ${f(p.sqs)} | ${f(wd.length / r.runs)}${wd.length > 0 ? ` (${byCommand(wd, r.runs)})` : ''} | ${f(ws.length / r.runs)} (${byCommand(ws, r.runs)}) | ${units(all)} | ${ratio(calls(all), calls(runBase))} | ${perMillion(all.dollars)} | ${ratio(all.dollars, runBase.dollars)} |`;
  }),
];

const debounceRuns = runRows.filter((r) => r.lateMs.length > 0);
const late = debounceRuns.flatMap((r) => r.lateMs);
const checkTable = [
  '| checks | result |',
  '|---|---|',
  `| debounced bursts that ran once, with their last args (or their last wave's), never early | ${debounceRuns.reduce((n, r) => n + r.lateMs.length, 0)} of ${debounceRuns.reduce((n, r) => n + r.runs, 0)} |`,
  `| a debounced run's start after its quiet time ended: p50 / max | ${f(percentile(late, 50), 0)} / ${f(Math.max(...late), 0)} ms |`,
  `| ${GAP_ENQUEUES} enqueues ${GAP_MS / 1000} s apart, delaySeconds ${DELAY_S} (one burst): runs | **${gapRuns.length}** (expected 1; args i = ${gapRuns.map((r) => r.i).join(', ')}; ${gapIds.size} job ids answered) |`,
  `| SDK retries | ${retries.length === 0 ? 'none' : retries.join('; ')} |`,
];

const perS = (xs: readonly Call[]) => xs.length / idleS;
const idleQuery = idleCalls.filter((c) => c.op === 'Query');
const family = (name: string) => idleQuery.filter((c) => c.on.endsWith(`:${name}`));
const perWorker = (xs: readonly Call[]) =>
  (['worker1', 'worker2'] as const).map((w) => f(perS(xs.filter((c) => c.who === w)), 2)).join(' + ');
const debouncedQ = perS(family('debounced'));
const otherQ = perS(family('schedules')) + perS(family('kept'));
const month = 30 * 86_400;
const idleTable = [
  `| idle, nothing due, ${f(idleS, 1)} s, 2 workers sharing the memcached rota | calls / s, fleet-wide | worker1 + worker2 |`,
  '|---|---|---|',
  ...[
    ['Query on the due index: schedules (s0-s3, each second)', family('schedules')],
    ['Query: kept jobs (t0-t3, every 10 s)', family('kept')],
    ['Query: debounced bursts (t4-t7, each second)', family('debounced')],
    ['GetItem control (the pause watch)', idleCalls.filter((c) => c.on === 'control')],
    ['ReceiveMessage, empty long polls', idleCalls.filter((c) => c.op === 'ReceiveMessage')],
    ['anything else', idleCalls.filter((c) => c.op !== 'Query' && c.op !== 'ReceiveMessage' && c.on !== 'control')],
  ].map(([label, xs]) => `| ${label as string} | ${f(perS(xs as Call[]), 2)} | ${perWorker(xs as Call[])} |`),
  `| debounce's shards, against the rest of the ticks' reads | +${f((debouncedQ / otherQ) * 100, 0)}% (${f(debouncedQ, 2)} against ${f(otherQ, 2)} Query / s) |  |`,
  `| their read units, a month: DynamoDB Local answers 0 for an empty Query; AWS bills at least 0.5 | ${f((debouncedQ * month * 0.5) / 1e6, 1)} M read units, $${f((debouncedQ * month * 0.5 * 0.125) / 1e6, 2)} a month for the fleet |  |`,
];

const load = `load average ${loadavg()[0]!.toFixed(1)} at the end`;
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${load}${QUICK ? ' (--quick)' : ''}`;
const rowBurst = runRows.find((r) => r.label.startsWith('debounce: one key') && r.runs === 2)!;
const burstCost = costOf([...rowBurst.producer, ...rowBurst.worker], rowBurst.runs);
const out = [
  `bench:keys, ${new Date().toISOString().slice(0, 16).replace('T', ' ')}, ${machine}`,
  'Calls counted on the SDK clients (one a command); write / read units as DynamoDB Local answers them, ~ where AWS’s rule was applied',
  '(transactions, refused conditional writes: see bench/keys/counting.ts). Prices: SQS $0.40 / M requests, DynamoDB on demand $0.625 / M',
  'write and $0.125 / M read units (us-east-1).',
  '',
  ...enqueueTable,
  '',
  ...runTable,
  '',
  ...checkTable,
  '',
  ...idleTable,
  '',
  (() => {
    const held = costOf(enqueueRows.find((r) => r.label.startsWith('throttle: within'))!.calls, N);
    const first = costOf(enqueueRows.find((r) => r.label.startsWith('throttle: the window'))!.calls, N);
    return `${N} enqueues of one throttled key within its window (1 sent, ${N - 1} throttled): ${f((calls(first) + (N - 1) * calls(held)) / N)} calls an enqueue (${f((first.dynamo + (N - 1) * held.dynamo) / N)} DynamoDB, ${f((first.sqs + (N - 1) * held.sqs) / N)} SQS).`;
  })(),
  `A debounced burst of ${BURST} costs ${f(calls(burstCost), 1)} calls a run (${ratio(calls(burstCost), calls(runBase))} a plain job's ${f(calls(runBase), 1)}) and ${perMillion(burstCost.dollars)} per million runs (${ratio(burstCost.dollars, runBase.dollars)});`,
  `per enqueue of it, ${f(costOf(nextEnqueues, 2 * (BURST - 1)).dynamo)} DynamoDB calls against a plain enqueue's 1 SQS call, and no SQS call: its run sends once.`,
];
console.log(out.join('\n'));
mkdirSync('bench/keys/results', { recursive: true });
const summary = (calls: readonly Call[], per: number) => ({ ...costOf(calls, per), byCommand: byCommand(calls, per) });
writeFileSync(
  'bench/keys/results/latest.json',
  `${JSON.stringify(
    {
      at: new Date().toISOString(),
      machine,
      quick: QUICK,
      scale: { N, BURST, KEYS_AT_ONCE, WAVE, WAVE_KEYS, SINGLE_RUNS, IDLE_S, DELAY_S },
      perEnqueue: enqueueRows.map((r) => ({ label: r.label, n: r.n, ...summary(r.calls, r.n) })),
      perRun: runRows.map((r) => ({
        label: r.label,
        runs: r.runs,
        enqueues: r.enqueues,
        producer: summary(r.producer, r.runs),
        worker: summary(r.worker, r.runs),
        lateMs: r.lateMs,
      })),
      gap: { enqueues: GAP_ENQUEUES, gapMs: GAP_MS, delaySeconds: DELAY_S, runs: gapRuns as Run[] },
      idle: { seconds: idleS, byCommand: byCommand(idleCalls, idleS) },
      problems,
    },
    null,
    2,
  )}\n`,
);
if (problems.length > 0) {
  console.error(`\n[bench:keys] FAILED: ${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
say('done');
process.exit(0); // the SDK clients' sockets
