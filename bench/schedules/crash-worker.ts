/**
 * A worker process for bench/schedules/crash.ts's SIGKILL loop: SYSTEM=sqs-jobs runs an sqs-jobs
 * worker with `schedules: true` (firing the schedules in JOB_TABLE), SYSTEM=bullmq a BullMQ Worker
 * on QUEUE_NAME (whose job scheduler the parent put). Each run of an occurrence's job appends to LOG
 *   start <occurrence, epoch s> <job id> <pid> <epoch ms> <occurrence's time, epoch ms>
 * as its handler starts, works WORK_MS, then appends `done <occurrence> <job id> <pid> <epoch ms>`.
 * Both lease a job for LEASE_S: sqs-jobs' visibility timeout (kept by heartbeats), BullMQ's lock
 * duration and stalled-job check. SIGTERM stops it gracefully; the parent sends SIGKILL.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createWorker } from '../../src/worker/worker.js';

const env = process.env;
const LOG = env.LOG!;
const WORK_MS = Number(env.WORK_MS ?? 400);
const LEASE_S = Number(env.LEASE_S ?? 10);
const line = (l: string) => appendFileSync(LOG, `${l}\n`);

/** The job of an occurrence: the same for both systems. */
async function run(occurrenceS: number, jobId: string, dueMs: number, signal?: AbortSignal): Promise<void> {
  line(`start ${occurrenceS} ${jobId} ${process.pid} ${Date.now()} ${dueMs}`);
  await sleep(WORK_MS, undefined, signal === undefined ? {} : { signal });
  line(`done ${occurrenceS} ${jobId} ${process.pid} ${Date.now()}`);
}

async function sqsJobs(): Promise<() => Promise<void>> {
  const work = defineJob({
    name: 'work',
    args: z.object({ ms: z.number() }),
    handle: async (_a, ctx) => {
      // `<schedule id>:<occurrence in epoch seconds>`
      const s = Number(ctx.jobId.slice(ctx.jobId.lastIndexOf(':') + 1));
      await run(s, ctx.jobId, s * 1000, ctx.signal);
    },
  });
  const worker = createWorker(
    {
      queues: [env.QUEUE_URL!],
      jobs: [work],
      store: { table: env.JOB_TABLE!, endpoint: env.DYNAMODB_ENDPOINT! },
      schedules: true,
      endpoint: env.SQS_ENDPOINT!,
      region: 'us-east-1',
      memcached: env.MEMCACHED!,
      lockKeyPrefix: env.LOCK_PREFIX!,
      concurrency: 10,
      visibilityTimeoutSeconds: LEASE_S,
      waitTimeSeconds: 2,
      shutdownTimeoutMs: 10_000,
      handleSignals: false,
      tracing: false,
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
    },
    { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' },
  );
  await worker.start();
  return () => worker.stop();
}

async function bullmq(): Promise<() => Promise<void>> {
  const { Worker } = await import('bullmq');
  const worker = new Worker(
    env.QUEUE_NAME!,
    async (job) => {
      // Jobs of a scheduler are `repeat:<scheduler id>:<slot in epoch ms>`, run at the slot plus the scheduler's offset.
      const slotMs = Number(job.id!.slice(job.id!.lastIndexOf(':') + 1));
      const offset = (job.opts as { repeat?: { offset?: number } }).repeat?.offset ?? 0;
      await run(Math.round(slotMs / 1000), job.id!, slotMs + offset);
    },
    {
      connection: { host: '127.0.0.1', port: Number(env.REDIS_PORT), maxRetriesPerRequest: null },
      concurrency: 10,
      lockDuration: LEASE_S * 1000,
      stalledInterval: LEASE_S * 1000,
    },
  );
  worker.on('error', () => {}); // a connection error while the loop kills others: BullMQ reconnects
  await worker.waitUntilReady();
  return () => worker.close();
}

const stop = await (env.SYSTEM === 'bullmq' ? bullmq() : sqsJobs());
process.once('SIGTERM', () => void stop().finally(() => process.exit(0)));
process.send?.({ type: 'ready' });
