/**
 * The drain-rate candidates of bench:admission, side by side on one run: two workers drain a queue
 * that always has work (a feeder keeps it so), then one stops, halving the drain at `stepAt`.
 * Handlers take 0.5-1.5x `handlerMs` (uniform), so completions come unevenly, as in the load phases.
 * Each second every candidate gives its estimate; the truth is the workers' completion rate over
 * the steady part of each half (from 10 s into it to its end), a constant per half.
 *   drain count (window W): the workers' delete count in memcached, its rise over W seconds, as
 *     admission reads it (QueueEstimate);
 *   depth difference (5 s): what was sent (a producer-side count, which several producers would
 *     share through a memcached counter) less the rise of the queue's count (visible + in flight),
 *     over 5 s.
 * CloudWatch (the workers' own metrics, or AWS/SQS NumberOfMessagesDeleted) is not run: ElasticMQ
 * has none, and its 60-second periods (published minutes late for AWS/SQS) put its reaction at over
 * a minute by construction.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
import { z } from 'zod';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { createProducer, createQueues, createWorker, defineJob } from '../../src/index.js';
import { QueueEstimate } from '../../src/producer/admission/estimate.js';

export interface CandidateFigures {
  readonly name: string;
  /** Mean |estimate − truth| / truth over the steady seconds, before and after the step. */
  readonly errorBefore: number;
  readonly errorAfter: number;
  /** Seconds after the step until the estimate is within 10% of the new truth and stays there. */
  readonly reactionSeconds: number | undefined;
  readonly callsPerSample: string;
}

export async function compareEstimators(o: {
  emq: string;
  memcached: string;
  direct: SQSClient;
  seconds: number;
  stepAt: number;
  concurrency: number;
  handlerMs: number;
}): Promise<{ figures: CandidateFigures[]; series: { t: number; name: string; rate: number }[] }> {
  const runId = randomUUID().slice(0, 6);
  const { queueUrl } = await createQueues(o.direct, { name: `adm-est-${runId}`, visibilityTimeout: 30, maxReceiveCount: 5 });
  const env = { AWS_ENDPOINT_URL: o.emq, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
  const lockKeyPrefix = `adm-est-${runId}:`;
  const job = defineJob({ name: 'work', args: z.object({ n: z.number() }), handle: () => sleep(o.handlerMs * (0.5 + Math.random())) });
  const completions: number[] = [];
  const workers = [0, 1].map(() =>
    createWorker(
      {
        queues: [queueUrl],
        jobs: [job],
        concurrency: o.concurrency,
        memcached: o.memcached,
        lockKeyPrefix,
        metrics: { sink: 'off' },
        handleSignals: false,
        logger: pino({ level: 'silent' }),
        waitTimeSeconds: 1,
      },
      env,
    ),
  );
  for (const w of workers) w.on('job:succeeded', () => completions.push(Date.now()));
  const producer = createProducer({ queueUrl, jobs: [job] }, env);
  const admin = new SqsQueueAdmin(o.direct);
  const lock = new MemcachedLock({ servers: o.memcached, keyPrefix: lockKeyPrefix });
  const ports = {
    counts: (u: string) => admin.counts(u),
    drained: (u: string) => lock.drains.read(u),
    held: (u: string, period: number) => lock.drains.readHeld(u, period),
    // The candidates are compared from nothing: no capacity kept from before.
    kept: async () => undefined,
    keep: async () => {},
  };
  const drain2 = new QueueEstimate(ports, queueUrl, 2_000);
  const drain5 = new QueueEstimate(ports, queueUrl, 5_000);
  const drain10 = new QueueEstimate(ports, queueUrl, 10_000);
  let sent = 0;
  const depthSamples: { at: number; sent: number; depth: number }[] = [];

  // Keep work waiting: 5 s of work first, then twice the nominal capacity of both workers, as the clock says.
  const nominal = (2 * o.concurrency * 1000) / o.handlerMs;
  const preload = Math.ceil(nominal * 5);
  await producer.enqueueMany(
    job,
    Array.from({ length: preload }, (_, n) => ({ n })),
  );
  sent += preload;
  const started = Date.now();
  await Promise.all(workers.map((w) => w.start()));
  const feeding = (async () => {
    let fed = 0;
    while (Date.now() - started < o.seconds * 1000) {
      const count = Math.floor(((Date.now() - started) * nominal * 2) / 1000) - fed;
      if (count > 0) {
        await producer.enqueueMany(
          job,
          Array.from({ length: count }, (_, n) => ({ n })),
        );
        fed += count;
        sent += count;
      }
      await sleep(100);
    }
  })();
  const series: { t: number; name: string; rate: number }[] = [];
  let stopped: Promise<void> | undefined;
  for (let t = 1; t <= o.seconds; t++) {
    await sleep(started + t * 1000 - Date.now());
    if (t === o.stepAt) stopped = workers[1]!.stop();
    const now = Date.now();
    await Promise.all([drain2.sample(), drain5.sample(), drain10.sample()]);
    const c = await admin.counts(queueUrl);
    depthSamples.push({ at: now, sent, depth: c.visible + c.inFlight + c.delayed });
    const d2 = drain2.view(now)?.capacity;
    const d5 = drain5.view(now)?.capacity;
    const d10 = drain10.view(now)?.capacity;
    if (d2 !== undefined) series.push({ t, name: 'drain count, 2 s', rate: d2 });
    if (d5 !== undefined) series.push({ t, name: 'drain count, 5 s', rate: d5 });
    if (d10 !== undefined) series.push({ t, name: 'drain count, 10 s', rate: d10 });
    const old = depthSamples.find((s) => s.at >= now - 5_100);
    const last = depthSamples.at(-1)!;
    if (old !== undefined && last.at - old.at >= 4_000) {
      const rate = (last.sent - old.sent - (last.depth - old.depth)) / ((last.at - old.at) / 1000);
      series.push({ t, name: 'depth difference, 5 s', rate });
    }
  }
  await feeding;
  await stopped;
  await workers[0]!.stop();
  producer.close();
  lock.close();

  // The truth: each half's steady completion rate.
  const rateBetween = (from: number, to: number) =>
    completions.filter((x) => x >= started + from * 1000 && x < started + to * 1000).length / (to - from);
  const truthBefore = rateBetween(10, o.stepAt);
  const truthAfter = rateBetween(o.stepAt + 10, o.seconds);
  const truthAt = new Map(Array.from({ length: o.seconds }, (_, i) => [i + 1, i + 1 < o.stepAt ? truthBefore : truthAfter]));
  for (const [t, rate] of truthAt) series.push({ t, name: 'truth (completions, each half)', rate });
  const names = ['drain count, 2 s', 'drain count, 5 s', 'drain count, 10 s', 'depth difference, 5 s'];
  const figures = names.map((name): CandidateFigures => {
    const points = series.filter((p) => p.name === name);
    const err = (from: number, to: number) => {
      const steady = points.filter((p) => p.t >= from && p.t < to && (truthAt.get(p.t) ?? 0) > 0);
      return steady.reduce((sum, p) => sum + Math.abs(p.rate - truthAt.get(p.t)!) / truthAt.get(p.t)!, 0) / Math.max(1, steady.length);
    };
    const after = points.filter((p) => p.t >= o.stepAt);
    const settled = after.findIndex((_, i) => after.slice(i).every((p) => Math.abs(p.rate - truthAt.get(p.t)!) <= 0.1 * truthAt.get(p.t)!));
    return {
      name,
      errorBefore: err(10, o.stepAt),
      errorAfter: err(o.stepAt + 10, o.seconds + 1),
      reactionSeconds: settled === -1 ? undefined : after[settled]!.t - o.stepAt,
      callsPerSample: name.startsWith('drain')
        ? '1 SQS + 1 memcached get (workers: 1 incr per queue per second)'
        : '1 SQS + 1 memcached get (producers: 1 incr per send)',
    };
  });
  return { figures, series };
}
