import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { run } from '../../src/cli/program.js';
import { defineJob } from '../../src/core/job.js';
import { defineBatchJob } from '../../src/core/batch-job.js';
import { createProducer } from '../../src/producer/producer.js';
import { cancelJob } from '../../src/status/cancel-job.js';
import { JobStatusReader } from '../../src/status/get-job.js';
import type { JobStatus } from '../../src/ports/status-store.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, LOCAL_MEMCACHED, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/*
 * Cancel as a user sees it (issue 19): against SQS (LocalStack or moto), memcached and DynamoDB
 * Local, with a real worker. A waiting job is deleted without running; a running one's ctx.signal
 * fires with CANCELLED and it is not retried; a fan-out parent's children not yet run are cancelled.
 */

const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `cancel-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const reader = new JobStatusReader(store, {});
beforeAll(() => createJobTable(dynamo, table));
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
  reader.close();
});
const start = useWorkers();

async function status(jobId: string): Promise<JobStatus | undefined> {
  const view = await reader.get(jobId);
  if (view?.state === 'unknown') throw new Error(`the store did not answer: ${view.error}`);
  return view;
}

async function emptied(queueUrl: string): Promise<void> {
  await eventually(
    async () => {
      const c = await queueCounts(sqs, queueUrl);
      return c.visible + c.inFlight + c.delayed === 0;
    },
    'the queue to empty',
    30_000,
  );
}

/** A producer and worker options that share one lock key space (the cancel mark must be where the workers look). */
function setup(queueUrl: string) {
  const lockKeyPrefix = `cancel-${randomUUID().slice(0, 8)}:`;
  const producer = createProducer({ queueUrl, store, memcached: LOCAL_MEMCACHED, lockKeyPrefix }, LOCAL_ENV);
  // A loaded host can hold the event loop past memcached's default 500 ms: a claim that times out
  // runs the job without the lock (fail open, at-least-once), and so without reading the cancel.
  return { producer, lockKeyPrefix, worker: { queues: [queueUrl], store, lockKeyPrefix, lockTimeoutMs: 2_000 } };
}

describe('cancel', () => {
  it('a waiting job is deleted when it arrives, never run, and reads cancelled', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'cancel-waiting');
    const runs: string[] = [];
    const job = defineJob({ name: 'report', args: z.object({ n: z.number() }), handle: ({ n }) => void runs.push(String(n)) });
    const s = setup(queueUrl);
    const { jobId } = await s.producer.enqueue(job, { n: 1 }, { track: true, delaySeconds: 2 });
    const { jobId: other } = await s.producer.enqueue(job, { n: 2 }, { track: true, delaySeconds: 2 });
    expect(await s.producer.cancel(jobId)).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled' } });
    s.producer.close();
    const worker = start({ ...s.worker, jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(async () => (await status(other))?.state === 'completed', 'the other job to complete', 30_000);
    await emptied(queueUrl);
    expect(runs).toEqual(['2']);
    // The worker's record of the attempt it received (attempt 1) follows the cancel's (attempt 0).
    expect(await status(jobId)).toMatchObject({ state: 'cancelled', attempt: 1, reason: 'cancelled before it ran' });
    expect(events.of('job:cancelled')).toEqual([expect.objectContaining({ jobId, reason: 'cancelled before it ran' })]);
    expect(await drain(sqs, dlqUrl)).toEqual([]);
    expect(events.of('error')).toEqual([]);
  });

  it("a running job's ctx.signal fires with CANCELLED; it is deleted, not retried, and reads cancelled", async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'cancel-running');
    let starts = 0;
    const reasons: unknown[] = [];
    const job = defineJob({
      name: 'render',
      args: z.object({}),
      handle: async (_a, ctx) => {
        starts++;
        ctx.progress(1, 100);
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reasons.push(ctx.signal.reason);
        throw ctx.signal.reason; // what a handler that honours its signal does
      },
    });
    const s = setup(queueUrl);
    const { jobId } = await s.producer.enqueue(job, {}, { track: true });
    const worker = start({ ...s.worker, jobs: [job], heartbeatIntervalMs: 1_000, progressIntervalMs: 100 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(async () => (await status(jobId))?.state === 'running', 'running', 30_000);
    expect(await cancelJob(jobId, { store, memcached: LOCAL_MEMCACHED, lockKeyPrefix: s.lockKeyPrefix }, LOCAL_ENV)).toMatchObject({
      outcome: 'cancelled',
      status: { state: 'cancelled', attempt: 1 },
    });
    await eventually(() => reasons.length === 1, 'the signal to fire', 15_000);
    expect(reasons[0]).toMatchObject({ code: 'CANCELLED', message: `job ${jobId} was cancelled` });
    await emptied(queueUrl);
    // Past two visibility timeouts: nothing comes back to run again.
    await sleepFor(8_500);
    expect(starts).toBe(1);
    expect(await status(jobId)).toMatchObject({ state: 'cancelled', attempt: 1 });
    expect(events.of('job:cancelled')).toEqual([expect.objectContaining({ jobId })]);
    expect(events.of('job:failed')).toEqual([]);
    expect(await drain(sqs, dlqUrl)).toEqual([]);
    // Ended: a second cancel changes nothing.
    expect(await s.producer.cancel(jobId)).toMatchObject({ outcome: 'cancelled' });
    s.producer.close();
  });

  it('a fan-out parent cancels its children not yet run; those already running finish', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cancel-fanout');
    const started: number[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const child = defineJob({
      name: 'row',
      args: z.object({ row: z.number() }),
      handle: async ({ row }) => {
        started.push(row);
        await gate;
      },
    });
    const parent = defineJob({
      name: 'rows',
      args: z.object({ rows: z.number() }),
      handle: (a, ctx) =>
        ctx.fanOut(
          child,
          Array.from({ length: a.rows }, (_, row) => ({ row })),
          { track: true },
        ),
    });
    const s = setup(queueUrl);
    const { jobId: parentId } = await s.producer.enqueue(parent, { rows: 30 }, { track: true });
    const worker = start({ ...s.worker, jobs: [parent, child], concurrency: 2 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => started.length === 2, 'two children running', 30_000);
    expect(await s.producer.cancel(parentId)).toMatchObject({ outcome: 'cancelled', status: { state: 'waiting-children' } });
    const before = started.length;
    s.producer.close();
    release();
    await emptied(queueUrl);
    const ended = await eventually(
      async () => {
        const p = await status(parentId);
        return p?.fanOut !== undefined && p.fanOut.succeeded + p.fanOut.failed === 30 ? p : undefined;
      },
      'every child counted',
      30_000,
    );
    // Every child that started after the cancel is one whose claim could not ask memcached (run
    // without the lock, as lockFailClosed: false says); the others were cancelled.
    const unasked = new Set(events.of('job:lock-unavailable').map((e) => e.jobId));
    const after = started.slice(before);
    expect(after.filter((row) => !unasked.has(`${parentId}.c${row}`))).toEqual([]);
    expect(ended.fanOut).toMatchObject({ total: 30, sent: 30, succeeded: started.length, failed: 30 - started.length });
    const cancelledChild = [...Array(30).keys()].find((row) => !started.includes(row))!;
    expect(await status(`${parentId}.c${cancelledChild}`)).toMatchObject({ state: 'cancelled', reason: 'cancelled before it ran' });
    expect(await status(`${parentId}.c${started[0]}`)).toMatchObject({ state: 'completed' });
    expect(events.count('job:cancelled')).toBe(30 - started.length);
    expect(events.of('error')).toEqual([]);
  });

  it('a batch item cancelled while it waits for its batch is not run; its neighbours are', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cancel-batch');
    const ran: number[][] = [];
    const job = defineBatchJob({
      name: 'index',
      args: z.object({ n: z.number() }),
      maxSize: 100,
      // Longer than the test: the batch runs when the worker stops, so no timing decides the result.
      maxWaitMs: 120_000,
      handle: (items) => void ran.push(items.map((i) => i.args.n)),
    });
    const s = setup(queueUrl);
    const ids = [];
    for (const n of [1, 2, 3]) ids.push((await s.producer.enqueue(job, { n }, { track: true })).jobId);
    const worker = start({ ...s.worker, jobs: [job], heartbeatIntervalMs: 1_000 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(async () => (await queueCounts(sqs, queueUrl)).inFlight === 3, 'the three items held in their batch', 15_000);
    expect(await s.producer.cancel(ids[1]!)).toMatchObject({ outcome: 'cancelled' });
    s.producer.close();
    // It leaves its batch at the heartbeat that reads the mark, not when the batch runs.
    await eventually(() => events.of('job:cancelled').length === 1, 'the cancelled item to leave its batch', 30_000);
    expect(ran).toEqual([]);
    await worker.stop(); // flushes the batch, with the two left in it
    await emptied(queueUrl);
    expect(ran).toEqual([[1, 3]]);
    expect(await status(ids[1]!)).toMatchObject({ state: 'cancelled', reason: 'cancelled while it waited in its batch' });
    expect(events.of('job:cancelled')).toEqual([expect.objectContaining({ jobId: ids[1] })]);
  });

  it('sqs-jobs job cancel: cancels a waiting job; an ended one exits 5, an unknown one 3', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cancel-cli');
    const job = defineJob({ name: 'export', args: z.object({}), handle: () => {} });
    const s = setup(queueUrl);
    const { jobId } = await s.producer.enqueue(job, {}, { track: true, delaySeconds: 30 });
    s.producer.close();
    const cli = async (args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const env = { AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
      const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env, signal: new AbortController().signal };
      const code = await run(
        ['job', 'cancel', ...args, '--table', table, '--memcached', LOCAL_MEMCACHED, '--lock-key-prefix', s.lockKeyPrefix],
        io,
      );
      return { code, out: out.join(''), err: err.join('') };
    };
    const cancelled = await cli([jobId]);
    expect(cancelled.code, cancelled.err).toBe(0);
    expect(cancelled.out).toMatch(new RegExp(`^cancelled: export ${jobId} {2}cancelled {2}attempt 0 {2}cancelled by request`));
    expect((await cli([jobId])).code).toBe(0); // again: the same answer
    const done = `done-${randomUUID().slice(0, 8)}`;
    const writer = createProducer({ queueUrl, store }, LOCAL_ENV);
    await writer.store!.transition({ jobId: done, jobName: 'export', state: 'completed', attempt: 1, at: new Date() });
    writer.close();
    expect(await cli([done])).toMatchObject({
      code: 5,
      err: expect.stringMatching(/JOB_ENDED: job done-\w+ has ended already \(completed\)/),
    });
    expect(await cli([`never-${randomUUID().slice(0, 8)}`])).toMatchObject({ code: 3, err: expect.stringMatching(/JOB_NOT_FOUND/) });
  });
});
