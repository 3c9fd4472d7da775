/**
 * One phase of bench:admission: a worker of fixed capacity on a fresh ElasticMQ queue, offered
 * `offeredPerSecond` new requests a second for `seconds` (open loop: a request arrives whether or not
 * earlier ones got in), each from a client that honours Retry-After (it waits what QueueFullError
 * says, then sends the same request again) until it is admitted or the phase ends. With or without
 * admission. Records, per second, the queue's backlog (SQS's count), and per job, its wait.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { QueueFullError } from '../../src/core/errors.js';
import { createProducer, createQueues, createWorker, defineJob } from '../../src/index.js';

export interface PhaseSettings {
  readonly name: string;
  readonly emq: string;
  readonly memcached: string;
  readonly direct: SQSClient;
  readonly seconds: number;
  readonly offeredPerSecond: number;
  /** The worker: concurrency × handler time is its capacity. */
  readonly concurrency: number;
  readonly handlerMs: number;
  /** Admission's SLA; undefined: no admission. */
  readonly slaSeconds: number | undefined;
}

export interface Second {
  readonly t: number;
  readonly backlog: number;
  /** The longest wait of the jobs started in that second (s). */
  readonly wait: number | undefined;
  readonly completed: number;
  /** Admission's own high-water mark then (its last refusal's), if it refused in that second. */
  readonly mark: number | undefined;
}

export interface PhaseResult {
  readonly name: string;
  readonly seconds: Second[];
  /** Every job's wait (ms) with when it started (s after the phase began). */
  readonly waits: { readonly t: number; readonly ms: number }[];
  readonly offered: number;
  readonly admitted: number;
  /** Requests refused at least once; of those, retried within the phase, and admitted on that first retry. */
  readonly refusedOnce: number;
  readonly retried: number;
  readonly firstRetryAdmitted: number;
  readonly eventuallyAdmitted: number;
  readonly refusals: number;
}

export async function runPhase(s: PhaseSettings): Promise<PhaseResult> {
  const runId = randomUUID().slice(0, 6);
  const { queueUrl } = await createQueues(s.direct, { name: `adm-${s.name}-${runId}`, visibilityTimeout: 30, maxReceiveCount: 5 });
  const env = { AWS_ENDPOINT_URL: s.emq, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
  const lockKeyPrefix = `adm-${runId}:`;
  const job = defineJob({ name: 'work', args: z.object({ n: z.number() }), handle: () => sleep(s.handlerMs) });
  const started = Date.now();
  const since = () => (Date.now() - started) / 1000;
  const waits: { t: number; ms: number }[] = [];
  let completed = 0;
  const worker = createWorker(
    {
      queues: [queueUrl],
      jobs: [job],
      concurrency: s.concurrency,
      memcached: s.memcached,
      lockKeyPrefix,
      metrics: { sink: 'off' },
      handleSignals: false,
      logger: (await import('pino')).pino({ level: 'silent' }),
      waitTimeSeconds: 1,
    },
    env,
  );
  worker.on('job:start', (e) => waits.push({ t: since(), ms: e.waitMs }));
  worker.on('job:succeeded', () => completed++);
  await worker.start();
  const producer = createProducer(
    {
      queueUrl,
      jobs: [job],
      memcached: s.memcached,
      lockKeyPrefix,
      ...(s.slaSeconds === undefined ? {} : { admission: { slaSeconds: s.slaSeconds } }),
    },
    env,
  );
  const admin = new SqsQueueAdmin(s.direct);
  const seconds: Second[] = [];
  let lastCompleted = 0;
  const sampler = setInterval(() => {
    void admin.counts(queueUrl).then((c) => {
      const t = Math.round(since());
      const started = waits.filter((w) => w.t > t - 1 && w.t <= t);
      seconds.push({
        t,
        backlog: c.visible + c.delayed,
        wait: started.length === 0 ? undefined : Math.max(...started.map((w) => w.ms)) / 1000,
        completed: completed - lastCompleted,
        mark: lastMark,
      });
      lastMark = undefined;
      lastCompleted = completed;
    });
  }, 1_000);

  const tally = { offered: 0, admitted: 0, refusedOnce: 0, retried: 0, firstRetryAdmitted: 0, eventuallyAdmitted: 0, refusals: 0 };
  let lastMark: number | undefined;
  const endAt = started + s.seconds * 1000;
  const clients: Promise<void>[] = [];
  const client = async (n: number) => {
    tally.offered++;
    for (let attempt = 0; Date.now() < endAt; attempt++) {
      if (attempt === 1) tally.retried++;
      try {
        await producer.enqueue(job, { n });
        tally.admitted++;
        if (attempt === 1) tally.firstRetryAdmitted++;
        if (attempt >= 1) tally.eventuallyAdmitted++;
        return;
      } catch (error) {
        if (!(error instanceof QueueFullError)) throw error;
        tally.refusals++;
        lastMark = error.highWaterMark;
        if (attempt === 0) tally.refusedOnce++;
        await sleep(error.retryAfterMs);
      }
    }
  };
  // Arrivals as the clock says (a loaded host fires timers late): every tick, as many as are due.
  let n = 0;
  while (Date.now() < endAt) {
    const due = Math.floor(((Date.now() - started) * s.offeredPerSecond) / 1000);
    while (n < due) clients.push(client(n++));
    await sleep(20);
  }
  await Promise.all(clients);
  clearInterval(sampler);
  await worker.stop();
  producer.close();
  await s.direct.send(new (await import('@aws-sdk/client-sqs')).PurgeQueueCommand({ QueueUrl: queueUrl })).catch(() => {});
  return { name: s.name, seconds, waits, ...tally };
}
