import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { getJob } from '../../src/status/get-job.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { useWorkers } from '../helpers/worker.js';

/**
 * Jobs that run later than SQS's delay, as a user runs them (LocalStack's SQS, DynamoDB Local,
 * memcached): kept in the job store, sent by a worker's tick with the delay left, started on time;
 * a cancel that holds however far ahead, and across a memcached restart. The producer's
 * maxSqsDelaySeconds is lowered so the kept path is taken for jobs due in seconds, not hours.
 */
const sqs = sqsClient();
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `run-at-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
let memcached: PrivateMemcached;
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
  memcached = await PrivateMemcached.start();
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await memcached.stop();
});
const start = useWorkers();

describe('runAt beyond SQS’s delay', () => {
  it('is kept, reads scheduled, and starts at its time, not before; a cancel outlives a memcached restart', async () => {
    const { queueUrl } = await freshQueues(sqs, 'run-at');
    const started = new Map<string, number>();
    const remind = defineJob({
      name: 'remind',
      args: z.object({ user: z.string() }),
      handle: (_args, ctx) => void started.set(ctx.jobId, Date.now()),
    });
    const producer = createProducer({ queueUrl, jobs: [remind], store, memcached: memcached.servers, maxSqsDelaySeconds: 2 }, ENV);
    const runAt = new Date(Date.now() + 15_000);
    const kept = await producer.enqueue(remind, { user: 'ann' }, { runAt, track: true });
    const cancelled = await producer.enqueue(remind, { user: 'bob' }, { runAt, track: true });
    expect(kept.messageId).toBeUndefined();
    expect(await getJob(kept.jobId, store, ENV)).toMatchObject({ state: 'scheduled', nextAttemptAt: runAt.toISOString() });
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 }); // nothing sent yet
    expect(await producer.cancel(cancelled.jobId)).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled' } });
    await memcached.stop(); // every cancel mark memcached held is gone
    await memcached.restart();
    const worker = start({ queues: [queueUrl], jobs: [remind], store, memcached: memcached.servers, schedules: true });
    await worker.start();
    await eventually(() => started.has(kept.jobId), 'the kept job started', 40_000);
    await sleep(2_000);
    producer.close();
    expect(started.get(kept.jobId)).toBeGreaterThanOrEqual(runAt.getTime());
    console.log(`[run-at] lateness ${started.get(kept.jobId)! - runAt.getTime()} ms`);
    expect(started.has(cancelled.jobId)).toBe(false);
    expect(await getJob(cancelled.jobId, store, ENV)).toMatchObject({ state: 'cancelled', reason: 'cancelled before its time' });
    await eventually(async () => (await getJob(kept.jobId, store, ENV))?.state === 'completed', 'completed');
  }, 90_000);

  it('a cancel of a job already in the queue outlives a memcached restart: the job store keeps it, and the mark is put back', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sent-cancel');
    const ran: string[] = [];
    const remind = defineJob({ name: 'remind', args: z.object({ user: z.string() }), handle: (_args, ctx) => void ran.push(ctx.jobId) });
    const producer = createProducer({ queueUrl, jobs: [remind], store, memcached: memcached.servers }, ENV);
    // In SQS (its delay within SQS's own), one cancelled and one not; then memcached forgets every mark.
    const cancelled = await producer.enqueue(remind, { user: 'cy' }, { delaySeconds: 2, track: true });
    const kept = await producer.enqueue(remind, { user: 'di' }, { delaySeconds: 2, track: true });
    expect(cancelled.messageId).toBeDefined();
    expect(await producer.cancel(cancelled.jobId)).toMatchObject({ outcome: 'cancelled' });
    await memcached.stop();
    await memcached.restart();
    const worker = start({ queues: [queueUrl], jobs: [remind], store, memcached: memcached.servers });
    await worker.start();
    await eventually(async () => (await getJob(kept.jobId, store, ENV))?.state === 'completed', 'the other job completed', 30_000);
    await eventually(async () => (await queueCounts(sqs, queueUrl)).inFlight === 0, 'the cancelled one deleted', 10_000);
    expect(ran).toEqual([kept.jobId]);
    expect(await getJob(cancelled.jobId, store, ENV)).toMatchObject({ state: 'cancelled' });
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    // Put back in memcached: the same job id enqueued again is refused there, as before the restart.
    const again = await producer.enqueue(remind, { user: 'cy' }, { jobId: cancelled.jobId, track: true });
    // Received and deleted without running: the queue empties.
    await eventually(async () => Object.values(await queueCounts(sqs, queueUrl)).every((n) => n === 0), 'the copy received');
    producer.close();
    expect(again.jobId).toBe(cancelled.jobId);
    expect(ran).toEqual([kept.jobId]);
  }, 90_000);
});
