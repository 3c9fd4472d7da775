/**
 * How fast a pause and a resume reach a fleet: WORKERS worker processes (worker.ts) on one queue,
 * fed a steady stream of no-op jobs (`ratePerSecond`, sent by this process). Each round the job
 * type (or the queue) is paused at T0 and resumed at T1, a random time later (holdMs), so that T0
 * and T1 fall anywhere in the workers' one-second watch. Per worker and round, from its own clock
 * readings (one machine, one clock):
 *  - a job type's pause: T0 → its last start of the job before T1 (the pause's reach: nothing
 *    starts after it), and T0 → the first message it found paused (job:waiting / job:deferred,
 *    limit 'paused'). The stream's gap between starts bounds how close either is to the moment the
 *    worker read the pause: the first comes at most a gap before, the second at most a gap after.
 *  - a queue's pause: T0 → the last receive it asked SQS for before T1 (a paused queue is not
 *    received from), and T0 → its last start.
 *  - the resume: T1 → its first start after it (held messages start as soon as it reads the
 *    resume), and for a queue T1 → its first receive.
 * Also checked: starts after a worker found a message paused (none expected).
 */
import { startWorker, type WorkerProcess } from './child.js';
import { sleep } from './figures.js';
import type { Taken } from './worker.js';
import { createPauses, createProducer, createQueues, createSqsClient, ENV, JOB, type Servers, serversOf, work } from './parts.js';

export const WORKERS = 4;

export interface ReachSettings extends Servers {
  readonly jobRounds: number;
  readonly queueRounds: number;
  readonly ratePerSecond: number;
  /** How long each pause holds: a random time in this range. */
  readonly holdMs: readonly [number, number];
  readonly afterMs: number;
  readonly say: (line: string) => void;
}

/** Milliseconds, one per worker and round; NaN where there was nothing to time. */
export interface ReachFigures {
  readonly job: { lastStart: number[]; firstPaused: number[]; resumeStart: number[] };
  readonly queue: { lastReceive: number[]; lastStart: number[]; resumeReceive: number[]; resumeStart: number[] };
  /** How long pause() and resume() took (the store's write, then memcached's). */
  readonly pauseCallMs: number[];
  readonly resumeCallMs: number[];
  /** Starts after the worker had found a message paused, before the resume: 0 expected. */
  readonly startsAfterPaused: number;
  /** Mean gap between one worker's starts while nothing was paused: the resolution of the timings. */
  readonly gapMs: number;
  /** Pauses whose notice could not be written to memcached (the workers then see it within 30 s). */
  readonly untold: number;
}

export async function reach(s: ReachSettings): Promise<ReachFigures> {
  const sqs = createSqsClient({ endpoint: s.sqs, region: 'us-east-1' }, {}, ENV);
  const queueName = `pause-reach-${Date.now().toString(36)}`;
  const { queueUrl } = await createQueues(sqs, { name: queueName, visibilityTimeout: 30 });
  sqs.destroy();
  const producer = createProducer({ queueUrl, endpoint: s.sqs, region: 'us-east-1', jobs: [work], tracing: false }, ENV);
  const pauses = createPauses({ store: { table: s.table, endpoint: s.dynamodb }, memcached: s.memcached, lockKeyPrefix: s.prefix }, ENV);
  const workers: WorkerProcess[] = [];
  let streaming = true;
  let sent = 0;
  let sendErrors = 0;
  const perTick = Math.max(1, Math.round(s.ratePerSecond / 20));
  const stream = (async () => {
    for (let next = performance.now(); streaming; ) {
      producer
        .enqueueMany(
          work,
          Array.from({ length: perTick }, () => ({ i: sent++ })),
        )
        .catch(() => sendErrors++);
      next += 50;
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  const out: { -readonly [K in keyof ReachFigures]: ReachFigures[K] } = {
    job: { lastStart: [], firstPaused: [], resumeStart: [] },
    queue: { lastReceive: [], lastStart: [], resumeReceive: [], resumeStart: [] },
    pauseCallMs: [],
    resumeCallMs: [],
    startsAfterPaused: 0,
    gapMs: Number.NaN,
    untold: 0,
  };
  try {
    const starting = Array.from({ length: WORKERS }, () =>
      startWorker({ ...serversOf(s), queueUrl, pauses: true, concurrency: 10, record: true }),
    );
    for (const w of await Promise.allSettled(starting)) if (w.status === 'fulfilled') workers.push(w.value);
    if (workers.length < WORKERS) throw new Error('a reach worker did not start');
    await sleep(1_500);
    await takeAll(workers);
    const warmMs = 2_000;
    await sleep(warmMs);
    const warm = await takeAll(workers);
    out.gapMs = warmMs / (warm.reduce((n, t) => n + t.starts.length, 0) / WORKERS);
    const rounds = [...Array<'job'>(s.jobRounds).fill('job'), ...Array<'queue'>(s.queueRounds).fill('queue')];
    for (const [i, kind] of rounds.entries()) {
      const scope = kind === 'job' ? { job: JOB } : { queue: queueName };
      await sleep(Math.random() * 300);
      const t0 = Date.now();
      const paused = await pauses.pause(scope, { by: 'bench:pause', reason: `round ${i + 1}` });
      out.pauseCallMs.push(Date.now() - t0);
      if (!paused.told) out.untold++;
      const [shortest, longest] = s.holdMs;
      await sleep(t0 + shortest + Math.random() * (longest - shortest) - Date.now());
      const t1 = Date.now();
      await pauses.resume(scope);
      out.resumeCallMs.push(Date.now() - t1);
      await sleep(s.afterMs);
      const taken = await takeAll(workers);
      for (const t of taken) {
        const held = t.paused.map(([at]) => at).filter((at) => at >= t0 && at < t1);
        const startsIn = t.starts.filter((at) => at >= t0 && at < t1);
        const firstHeld = held.length === 0 ? Number.NaN : Math.min(...held);
        const lastStart = startsIn.length === 0 ? t0 : Math.max(...startsIn);
        const resumeStart = Math.min(...t.starts.filter((at) => at >= t1)) - t1;
        out.startsAfterPaused += startsIn.filter((at) => at > firstHeld).length;
        if (kind === 'job') {
          out.job.lastStart.push(lastStart - t0);
          out.job.firstPaused.push(firstHeld - t0);
          out.job.resumeStart.push(resumeStart);
        } else {
          const asked = t.receives.map(([at]) => at);
          const before = asked.filter((at) => at >= t0 && at < t1);
          out.queue.lastReceive.push(before.length === 0 ? 0 : Math.max(...before) - t0);
          out.queue.lastStart.push(lastStart - t0);
          out.queue.resumeReceive.push(Math.min(...asked.filter((at) => at >= t1)) - t1);
          out.queue.resumeStart.push(resumeStart);
        }
      }
      const last = kind === 'job' ? out.job.lastStart : out.queue.lastReceive;
      s.say(
        `  reach round ${i + 1}/${rounds.length} (${kind}): pause ${last
          .slice(-WORKERS)
          .map((x) => x.toFixed(0))
          .join(', ')} ms; resume ${(kind === 'job' ? out.job.resumeStart : out.queue.resumeStart)
          .slice(-WORKERS)
          .map((x) => x.toFixed(0))
          .join(', ')} ms`,
      );
    }
  } finally {
    streaming = false;
    await stream;
    await Promise.all(workers.map((w) => w.stop()));
    producer.close();
    pauses.close();
  }
  if (sendErrors > 0) s.say(`  ${sendErrors} of the stream's sends failed`);
  return out;
}

const takeAll = (workers: WorkerProcess[]): Promise<Taken[]> => Promise.all(workers.map((w) => w.take()));
