/**
 * Issue #26: publish-to-done latency and calls per event, one event fanned out by SNS to 4
 * subscriber jobs against the producer enqueueing the same 4 jobs itself, on LocalStack (run.sh
 * starts it on its own port). Both paths in one run, interleaved: path A's event i at t0 + i/rate,
 * path B's half an interval later, open loop (a slow call never delays the next one).
 *
 *   tsx bench/events/main.ts [--quick] [--events N] [--rate R] [--warmup W]
 *
 * "Done" is the handler's entry: each job's time runs from the start of the publish() call (or of
 * the Promise.all of the 4 enqueue() calls) to the first line of its handler (a no-op).
 */
import { parseArgs } from 'node:util';
import { directPath, JOBS, newStack, type Path, snsPath, WORKER } from './paths.js';
import { anomalies, breakdown, interpretation, type PathResult, table } from './report.js';
import { percentile, Timeline } from './timeline.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    events: { type: 'string' },
    rate: { type: 'string' },
    warmup: { type: 'string' },
  },
});
const positive = (text: string | undefined, fallback: number, what: string): number => {
  const n = text === undefined ? fallback : Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${what} must be a positive number, got ${text}`);
  return n;
};
const EVENTS = Math.min(2_000, Math.round(positive(values.events, values.quick ? 50 : 300, 'events')));
const RATE = Math.min(50, positive(values.rate, 2, 'rate'));
const WARMUP = Math.round(positive(values.warmup, 10, 'warmup'));
const DRAIN_TIMEOUT_MS = 60_000;
const ENDPOINT = process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:4590';
if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(ENDPOINT)) throw new Error(`loopback only: AWS_ENDPOINT_URL is ${ENDPOINT}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Send events from..to-1 on both paths at RATE per second each, B offset by half an interval; resolve when every call settled. */
async function pace(paths: readonly Path[], from: number, to: number): Promise<void> {
  const interval = 1_000 / RATE;
  const t0 = performance.now() + 20;
  const inFlight: Promise<void>[] = [];
  for (let seq = from; seq < to; seq++) {
    for (const [k, path] of paths.entries()) {
      await sleep(t0 + (seq - from) * interval + (k * interval) / paths.length - performance.now());
      path.timeline.began(seq);
      inFlight.push(
        path.send(seq).then(
          () => path.timeline.resolved(seq),
          (error: Error) => {
            path.timeline.sendErrors++;
            console.error(`  ${path.name} send ${seq} failed: ${error.message}`);
          },
        ),
      );
    }
  }
  await Promise.all(inFlight);
}

/** Wait until every job of events from..to-1 ran on every path, or the drain timeout. */
async function drained(paths: readonly Path[], from: number, to: number): Promise<boolean> {
  const want = (to - from) * JOBS.length;
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (paths.some((p) => p.timeline.runsBetween(from, to) < want)) {
    if (Date.now() > deadline) return false;
    await sleep(20);
  }
  return true;
}

function result(path: Path, from: number, to: number, counts: Record<keyof Path['calls'], Record<string, number>>): PathResult {
  const lat = path.timeline.latencies(from, to);
  const failedCalls = path.calls.producerSns.failed + path.calls.producerSqs.failed + path.calls.workerSqs.failed;
  return {
    name: path.name,
    events: to - from,
    ...lat,
    duplicates: path.timeline.duplicates,
    sendErrors: path.timeline.sendErrors,
    failedCalls,
    producerSns: counts.producerSns,
    producerSqs: counts.producerSqs,
    workerSqs: counts.workerSqs,
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const server = process.env.BENCH_EVENTS_LOCALSTACK ?? 'given';
  console.log(`bench:events — SNS fan-out vs direct enqueue, ${JOBS.length} jobs per event, LocalStack at ${ENDPOINT} (${server})`);
  console.log(`  ${EVENTS} events per path (+${WARMUP} warm-up, not measured), ${RATE}/s per path, interleaved; Node ${process.version}`);
  console.log(
    `  workers: one per queue (${JOBS.length} per path), concurrency ${WORKER.concurrency}, waitTimeSeconds ${WORKER.waitTimeSeconds}, ` +
      `visibility ${WORKER.visibilityTimeoutSeconds} s, deleteFlushMs ${WORKER.deleteFlushMs}; memcached dedupe lock: off; metrics: off`,
  );
  console.log('  sns: 1 producer.publish() → topic → 4 subscriber queues (provisionEvents, raw delivery) → 4 `on: event` jobs');
  console.log('  direct: 4 producer.enqueue() in parallel (Promise.all), one per queue, 4 producers on one SQS client (not enqueueMany:');
  console.log('    it sends one job to one queue); done = handler entry; calls counted per attempt by a middleware on every SDK client\n');

  const stack = newStack(ENDPOINT);
  const sns = await snsPath(stack, new Timeline(JOBS.length));
  const paths: Path[] = [sns];
  try {
    paths.push(await directPath(stack, new Timeline(JOBS.length)));
    await pace(paths, 0, WARMUP);
    if (!(await drained(paths, 0, WARMUP))) throw new Error('the warm-up events did not all run within the drain timeout');
    for (const p of paths) for (const t of Object.values(p.calls)) t.reset();

    const from = WARMUP;
    const to = WARMUP + EVENTS;
    const t = performance.now();
    await pace(paths, from, to);
    const complete = await drained(paths, from, to);
    const counts = paths.map((p) => ({
      producerSns: p.calls.producerSns.snapshot(),
      producerSqs: p.calls.producerSqs.snapshot(),
      workerSqs: p.calls.workerSqs.snapshot(),
    }));
    console.log(`measured phase: ${((performance.now() - t) / 1000).toFixed(1)} s${complete ? '' : ' (drain timed out)'}\n`);
    const [a, b] = paths.map((p, i) => result(p, from, to, counts[i] as (typeof counts)[number]));
    if (a === undefined || b === undefined) throw new Error('two paths expected');
    console.log(table(a, b));
    console.log('\ncalls per event by operation:');
    console.log(`  ${breakdown(a)}\n  ${breakdown(b)}`);
    const slow = [a, b].filter((p) => percentile(p.call, 50) > 1_000 / RATE / 2);
    for (const p of slow)
      console.log(
        `\nwarning: ${p.name}'s producer calls took over half the interval between events: LocalStack is near saturation, lower --rate`,
      );
    const problems = [...anomalies(a), ...anomalies(b)];
    console.log(problems.length === 0 ? '\nevery job ran exactly once; no call failed.' : `\nproblems:\n  ${problems.join('\n  ')}`);
    console.log(`\n${interpretation(a, b)}`);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    const t = Date.now();
    await Promise.all(paths.map((p) => p.close()));
    console.log(
      `\n(stopped the workers and deleted the queues and topic in ${Date.now() - t} ms; total ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
}

await main();
