/**
 * What the pause watch costs a worker while nothing is paused: CPU per message of a no-op job, a
 * worker with `pauses` on (the default: it asks memcached each second whether the pauses changed,
 * reads the job store when they did and every 30 s) against the same worker with `pauses: false`.
 * Both have the job store and the memcached lock.
 *
 * The two run at once, each in a process of its own on a queue of its own: a pair. The load of a
 * shared machine moves between one run and the next (by 20-30% on 2 cores); two runs at once share
 * it. Each is counted over the same stretch of time, from when both have started `warm` jobs to
 * when one of them has started `messages` more: CPU ÷ jobs started in it. Every queue is filled
 * before the first pair; pairs not counted go first, until the servers are warm (a cold server
 * slows both of a pair alike, so --quick has none); which of the two starts first alternates. The
 * ratio on ÷ off is taken within each pair.
 */
import { untilSteady } from '../lib/warm-up.js';
import { startWorker, type WorkerProcess } from './child.js';
import { median, sleep } from './figures.js';
import { createProducer, createQueues, createSqsClient, ENV, type Servers, serversOf, work } from './parts.js';
import type { Taken } from './worker.js';

export interface CpuSettings extends Servers {
  readonly messages: number;
  readonly warm: number;
  readonly pairs: number;
  /** Messages of each pair not counted, before the rest, and how long those go on (at least, at most; [0, 0]: none). */
  readonly warmUpRun: number;
  readonly warmUpMs: readonly [number, number];
  readonly say: (line: string) => void;
}

export interface CpuRun {
  readonly round: number;
  readonly pauses: boolean;
  readonly microsPerMessage: number;
  readonly perSecond: number;
}

export interface CpuFigures {
  readonly messages: number;
  readonly runs: CpuRun[];
  /** Median µs per message, on and off. */
  readonly on: number;
  readonly off: number;
  /** on ÷ off within each pair. */
  readonly ratios: number[];
  readonly ratio: number;
}

/** The longest a counted stretch may last (a stalled worker ends it). */
const WINDOW_MAX_MS = 120_000;
let queueSeq = 0;

export async function cpuPerMessage(s: CpuSettings): Promise<CpuFigures> {
  const sqs = createSqsClient({ endpoint: s.sqs, region: 'us-east-1' }, {}, ENV);
  const runs: CpuRun[] = [];
  try {
    const queue = async (n: number) => {
      const name = `pause-cpu-${Date.now().toString(36)}-${queueSeq++}`;
      const { queueUrl } = await createQueues(sqs, { name, visibilityTimeout: 30 });
      await fill(s.sqs, queueUrl, n);
      return queueUrl;
    };
    // A little over `warm + messages` each: the faster of the two must not run dry before the stretch ends.
    const size = s.warm + Math.ceil(s.messages * 1.05);
    const started = performance.now();
    const plan: { on: string; off: string }[] = [];
    for (let round = 0; round < s.pairs; round++) plan.push({ on: await queue(size), off: await queue(size) });
    s.say(`  filled ${plan.length * 2} queues in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const warmUp = await untilSteady(
      async () => {
        const pair = await pairOn(s, { on: await queue(s.warmUpRun), off: await queue(s.warmUpRun) }, true);
        return (await stretch(pair, 0, s.warmUpRun)).ms;
      },
      s.warmUpMs[0],
      s.warmUpMs[1],
    );
    if (warmUp.length > 0)
      s.say(`  warm-up: ${warmUp.map((ms) => (s.warmUpRun / (ms! / 1000)).toFixed(0)).join(', ')} messages/s a worker`);
    for (const [round, queues] of plan.entries()) {
      const pair = await pairOn(s, queues, round % 2 === 0);
      const { on, off, ms } = await stretch(pair, s.warm, s.messages);
      for (const [pauses, n] of [
        [true, on],
        [false, off],
      ] as const) {
        runs.push({ round, pauses, microsPerMessage: n.cpuMicros / n.handled, perSecond: n.handled / (ms / 1000) });
      }
      const [a, b] = runs.slice(-2);
      s.say(
        `  cpu pair ${round + 1}: on ${a!.microsPerMessage.toFixed(0)} µs/message (${a!.perSecond.toFixed(0)}/s), ` +
          `off ${b!.microsPerMessage.toFixed(0)} µs/message (${b!.perSecond.toFixed(0)}/s): ${(a!.microsPerMessage / b!.microsPerMessage).toFixed(2)}×`,
      );
    }
  } finally {
    sqs.destroy();
  }
  const of = (pauses: boolean) => runs.filter((r) => r.pauses === pauses);
  const ratios = Array.from({ length: s.pairs }, (_, round) => {
    const [on, off] = [true, false].map((p) => runs.find((r) => r.round === round && r.pauses === p)!.microsPerMessage);
    return on! / off!;
  });
  return {
    messages: s.messages,
    runs,
    on: median(of(true).map((r) => r.microsPerMessage)),
    off: median(of(false).map((r) => r.microsPerMessage)),
    ratios,
    ratio: median(ratios),
  };
}

interface Pair {
  readonly on: WorkerProcess;
  readonly off: WorkerProcess;
}

/** The two workers, started together (`onFirst`: the one with pauses forks first). */
async function pairOn(s: Servers, queues: { on: string; off: string }, onFirst: boolean): Promise<Pair> {
  const order = onFirst ? [true, false] : [false, true];
  const started = await Promise.allSettled(
    order.map((pauses) =>
      startWorker({ ...serversOf(s), queueUrl: pauses ? queues.on : queues.off, pauses, concurrency: 10, record: false }),
    ),
  );
  const workers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (workers.length < 2) {
    await Promise.all(workers.map((w) => w.stop()));
    throw new Error('a worker of the pair did not start');
  }
  return onFirst ? { on: workers[0]!, off: workers[1]! } : { on: workers[1]!, off: workers[0]! };
}

type Counted = { handled: number; cpuMicros: number };

/**
 * Count both over one stretch: from when both have started `warm` jobs to when one has started
 * `messages` more; then stop them. Answers what each did in it, and its length.
 */
async function stretch(pair: Pair, warm: number, messages: number): Promise<{ on: Counted; off: Counted; ms: number }> {
  const both = () => Promise.all([pair.on.take(), pair.off.take()]);
  try {
    const deadline = performance.now() + WINDOW_MAX_MS;
    let from: Taken[] = await both();
    while (from.some((t) => t.handled < warm) && performance.now() < deadline) {
      await sleep(50);
      from = await both();
    }
    const t0 = performance.now();
    let to = from;
    while (to.every((t, i) => t.handled - from[i]!.handled < messages) && performance.now() < deadline) {
      await sleep(100);
      to = await both();
    }
    const ms = performance.now() - t0;
    const counted = (i: number): Counted => ({
      handled: to[i]!.handled - from[i]!.handled,
      cpuMicros: to[i]!.cpuMicros - from[i]!.cpuMicros,
    });
    return { on: counted(0), off: counted(1), ms };
  } finally {
    await Promise.all([pair.on.stop(), pair.off.stop()]);
  }
}

/** Put n no-op jobs on the queue through a producer, 100 a call, 16 calls at a time. */
export async function fill(endpoint: string, queueUrl: string, n: number): Promise<void> {
  const producer = createProducer({ queueUrl, endpoint, region: 'us-east-1', jobs: [work], tracing: false }, ENV);
  try {
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < n; i += 100) {
      calls.push(
        producer.enqueueMany(
          work,
          Array.from({ length: Math.min(100, n - i) }, (_, j) => ({ i: i + j })),
        ),
      );
      if (calls.length >= 16) await Promise.all(calls.splice(0));
    }
    await Promise.all(calls);
  } finally {
    producer.close();
  }
}
