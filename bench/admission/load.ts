/**
 * One phase of bench:admission: a worker of fixed capacity on a fresh ElasticMQ queue, offered new
 * requests at each load's rate for `seconds` (open loop: a request arrives whether or not earlier
 * ones got in), each from a client that honours Retry-After (it waits what QueueFullError says,
 * then sends the same request again) until it is admitted or the phase ends. With or without
 * admission; with tiers (each load's priority its lane, the worker picking `tiers`) or on one queue.
 * Records, per second, the backlog (SQS's count over the lanes), and per job, its wait.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import type { KeptCapacity } from '../../src/ports/drain-meter.js';
import { QueueFullError } from '../../src/core/errors.js';
import { createProducer, createQueues, createWorker, defineJob } from '../../src/index.js';
import type { Priority } from '../../src/core/priority.js';

/** New requests a second for jobs of one tier. */
export interface Load {
  readonly priority: Priority;
  readonly perSecond: number;
}

export interface PhaseSettings {
  readonly name: string;
  readonly emq: string;
  readonly memcached: string;
  readonly direct: SQSClient;
  readonly seconds: number;
  readonly loads: readonly Load[];
  /** Serve the tiers' lanes, picked so; undefined: every job on the one queue. */
  readonly tiers?: 'strict' | 'weighted';
  /** The worker: concurrency × handler time is its capacity. */
  readonly concurrency: number;
  readonly handlerMs: number;
  /** Admission's SLA; undefined: no admission. */
  readonly slaSeconds: number | undefined;
  /** A capacity kept for the queue before the phase, as an earlier fleet's producer would have left it. */
  readonly kept?: KeptCapacity;
}

export interface Second {
  readonly t: number;
  readonly backlog: number;
  /** The longest wait of the jobs started in that second (s). */
  readonly wait: number | undefined;
  /** Admission's own high-water mark then (its last refusal's), if it refused in that second. */
  readonly mark: number | undefined;
  /** What admission saw then (producer.admissionState): its projected backlog, capacity and the turns it kept. */
  readonly admission?: { readonly backlog: number; readonly capacity: number | undefined; readonly turnsHeld: number };
  /** Messages the worker held received but not started, and ran. */
  readonly held: number;
  readonly running: number;
}

export interface PhaseResult {
  readonly name: string;
  readonly seconds: Second[];
  /** When each job succeeded (s after the phase began): rates come from these, not from the sampler's ticks (a loaded host fires them late). */
  readonly completions: number[];
  /** Every job's wait (ms) with when it started (s after the phase began) and its tier. */
  readonly waits: { readonly t: number; readonly ms: number; readonly priority: Priority }[];
  /** Refusals per tier. */
  readonly refusalsBy: Partial<Record<Priority, number>>;
  readonly offered: number;
  readonly admitted: number;
  /** Requests refused at least once; of those, retried within the phase, and admitted on that first retry. */
  readonly refusedOnce: number;
  readonly retried: number;
  readonly firstRetryAdmitted: number;
  readonly eventuallyAdmitted: number;
  readonly refusals: number;
  /** The longest Retry-After told (ms). */
  readonly maxRetryAfterMs: number;
  /** This process's event-loop delay over the phase (ms): a loaded host shows here first. */
  readonly loopDelay: { readonly p99: number; readonly max: number };
}

/** ADMISSION_WINDOW_SECONDS: admission's windowSeconds for this run (default: the option's default). */
const windowSeconds =
  process.env.ADMISSION_WINDOW_SECONDS === undefined ? {} : { windowSeconds: Number(process.env.ADMISSION_WINDOW_SECONDS) };

export async function runPhase(s: PhaseSettings): Promise<PhaseResult> {
  const runId = randomUUID().slice(0, 6);
  const tiers = s.tiers !== undefined;
  const pair = await createQueues(s.direct, { name: `adm-${s.name}-${runId}`, visibilityTimeout: 30, maxReceiveCount: 5, tiers });
  const { queueUrl } = pair;
  const lanes = [queueUrl, ...(pair.lanes === undefined ? [] : [pair.lanes.high, pair.lanes.low])];
  const env = { AWS_ENDPOINT_URL: s.emq, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
  const lockKeyPrefix = `adm-${runId}:`;
  const jobs = new Map(
    s.loads.map(({ priority }) => [
      priority,
      defineJob({
        name: `work-${priority}`,
        priority,
        args: z.object({ n: z.number() }),
        handle: () => sleep(s.handlerMs * (0.5 + Math.random())),
      }),
    ]),
  );
  const priorityOf = new Map([...jobs].map(([p, j]) => [j.name, p]));
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = Date.now();
  const since = () => (Date.now() - started) / 1000;
  const waits: { t: number; ms: number; priority: Priority }[] = [];
  const completions: number[] = [];
  const worker = createWorker(
    {
      queues: [queueUrl],
      tiers: s.tiers === undefined ? false : { pick: s.tiers },
      jobs: [...jobs.values()],
      concurrency: s.concurrency,
      memcached: s.memcached,
      lockKeyPrefix,
      metrics: { sink: 'off' },
      handleSignals: false,
      logger: (await import('pino')).pino({ level: 'silent' }),
      waitTimeSeconds: 1,
      // Three long polls per queue: one poll at a time caps intake at 10 messages per round trip, which a loaded host reaches first.
      receiveConcurrency: 3,
    },
    env,
  );
  worker.on('job:start', (e) => waits.push({ t: since(), ms: e.waitMs, priority: priorityOf.get(e.jobName)! }));
  worker.on('job:succeeded', () => {
    completions.push(since());
  });
  await worker.start();
  if (s.kept !== undefined) {
    const lock = new MemcachedLock({ servers: s.memcached, keyPrefix: lockKeyPrefix });
    await lock.drains.keepCapacity(queueUrl, s.kept);
    lock.close();
  }
  const producer = createProducer(
    {
      queueUrl,
      tiers,
      jobs: [...jobs.values()],
      memcached: s.memcached,
      lockKeyPrefix,
      ...(s.slaSeconds === undefined ? {} : { admission: { slaSeconds: s.slaSeconds, ...windowSeconds } }),
    },
    env,
  );
  const admin = new SqsQueueAdmin(s.direct);
  const seconds: Second[] = [];
  const sampler = setInterval(() => {
    void Promise.all(lanes.map((url) => admin.counts(url))).then((counts) => {
      const t = Math.round(since());
      const started = waits.filter((w) => w.t > t - 1 && w.t <= t);
      const states = lanes.map((url) => producer.admissionState(url)).filter((a) => a !== undefined);
      const a =
        states.length === 0
          ? undefined
          : {
              backlog: states.reduce((sum, x) => sum + x.backlog, 0),
              drainPerSecond: states.reduce<number | undefined>(
                (sum, x) => (x.drainPerSecond === undefined ? sum : (sum ?? 0) + x.drainPerSecond),
                undefined,
              ),
              turnsHeld: states.reduce((sum, x) => sum + x.turnsHeld, 0),
            };
      seconds.push({
        ...(a === undefined ? {} : { admission: { backlog: Math.round(a.backlog), capacity: a.drainPerSecond, turnsHeld: a.turnsHeld } }),
        held: worker.inFlight.buffered,
        running: worker.inFlight.running,
        t,
        backlog: counts.reduce((sum, c) => sum + c.visible + c.delayed, 0),
        wait: started.length === 0 ? undefined : Math.max(...started.map((w) => w.ms)) / 1000,
        mark: lastMark,
      });
      lastMark = undefined;
    });
  }, 1_000);

  const tally = {
    offered: 0,
    admitted: 0,
    refusedOnce: 0,
    retried: 0,
    firstRetryAdmitted: 0,
    eventuallyAdmitted: 0,
    refusals: 0,
    maxRetryAfterMs: 0,
  };
  const refusalsBy: Partial<Record<Priority, number>> = {};
  let lastMark: number | undefined;
  const endAt = started + s.seconds * 1000;
  const clients: Promise<void>[] = [];
  const client = async (priority: Priority, n: number) => {
    const job = jobs.get(priority)!;
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
        refusalsBy[priority] = (refusalsBy[priority] ?? 0) + 1;
        lastMark = error.highWaterMark;
        tally.maxRetryAfterMs = Math.max(tally.maxRetryAfterMs, error.retryAfterMs);
        if (attempt === 0) tally.refusedOnce++;
        // Back when told, or at the end of the phase (a low tier may be told minutes).
        await sleep(Math.max(0, Math.min(error.retryAfterMs, endAt - Date.now())));
      }
    }
  };
  // Arrivals as the clock says (a loaded host fires timers late): every tick, as many as are due.
  const sent = s.loads.map(() => 0);
  while (Date.now() < endAt) {
    s.loads.forEach((load, i) => {
      const due = Math.floor(((Date.now() - started) * load.perSecond) / 1000);
      while (sent[i]! < due) clients.push(client(load.priority, sent[i]!++));
    });
    await sleep(20);
  }
  await Promise.all(clients);
  // With admission, every job admitted gets to start before the phase ends (its wait counts); at
  // most the SLA's worth, plus slack. Without, the backlog is left (it grows without bound).
  if (s.slaSeconds !== undefined) {
    const until = Date.now() + (2 * s.slaSeconds + 30) * 1000;
    while (Date.now() < until) {
      const counts = await Promise.all(lanes.map((url) => admin.counts(url)));
      const left = counts.reduce((sum, c) => sum + c.visible + c.delayed, 0) + worker.inFlight.buffered;
      if (left === 0) break;
      await sleep(250);
    }
  }
  clearInterval(sampler);
  await worker.stop();
  producer.close();
  const { PurgeQueueCommand } = await import('@aws-sdk/client-sqs');
  await Promise.all(lanes.map((url) => s.direct.send(new PurgeQueueCommand({ QueueUrl: url })).catch(() => {})));
  loop.disable();
  const loopDelay = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  return { name: s.name, seconds, waits, completions, refusalsBy, loopDelay, ...tally };
}
