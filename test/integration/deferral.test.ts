import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { createProducer } from '../../src/producer/producer.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_ENV, drain, eventually, freshQueues, memcachedClient, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// Paths that hand a message back, or end it, without running it to completion: none may lose a
// job, and none may spend its receive budget until SQS's redrive dead-letters it unrun.
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const empty = { visible: 0, inFlight: 0, delayed: 0 };

describe('a replay from the DLQ', () => {
  it('runs the job once, even right after it was dead-lettered', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'replay-soon', { maxReceiveCount: 3 });
    const lockKeyPrefix = `replay-${randomUUID().slice(0, 8)}:`;
    const failing = defineJob({
      name: 'report',
      args: z.object({}),
      handle: () => {
        throw new UnrecoverableError('bug in the handler');
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const broken = start({ queues: [queueUrl], jobs: [failing], lockKeyPrefix });
    const brokenEvents = recordEvents(broken);
    await broken.start();
    await producer.enqueue(failing, {}, { jobId: 'report-1' });
    await eventually(() => brokenEvents.count('job:dead-lettered') === 1, 'the job to be dead-lettered');
    await broken.stop();

    // The operator fixes the handler and replays at once, well within a visibility timeout.
    const runs: number[] = [];
    const fixed = defineJob({ name: 'report', args: z.object({}), handle: (_a, ctx) => void runs.push(ctx.attempt) });
    const worker = start({ queues: [queueUrl], jobs: [fixed], lockKeyPrefix });
    const events = recordEvents(worker);
    await worker.start();
    const replay = await replayDeadLetters(new SqsQueuePort(sqs), { dlqUrl, sourceQueueUrl: queueUrl });
    expect(replay.moved).toBe(1);
    await eventually(() => events.count('job:succeeded') === 1, 'the replayed job to run');
    await worker.stop();
    expect(runs).toHaveLength(1);
    expect(events.count('job:duplicate')).toBe(0);
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    producer.close();
  });
});

describe('a handler that honours its signal', () => {
  it('after a timeout, is retried at once by backoff, not held back as "running elsewhere"', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'timeout-honoured', { maxReceiveCount: 3 });
    const attempts: number[] = [];
    const job = defineJob({
      name: 'slow-once',
      args: z.object({}),
      timeoutMs: 500,
      backoff: { baseMs: 1_000, factor: 1, capMs: 1_000, jitter: 0 },
      handle: async (_a, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) await sleepFor(3_000, undefined, { signal: ctx.signal });
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const worker = start({ queues: [queueUrl], jobs: [job], visibilityTimeoutSeconds: 10 });
    const events = recordEvents(worker);
    await worker.start();
    await producer.enqueue(job, {});
    await eventually(() => events.count('job:succeeded') === 1, 'the retry to succeed', 15_000);
    await worker.stop();
    expect(attempts).toEqual([1, 2]);
    expect(events.count('job:handed-back')).toBe(0); // never found "running elsewhere"
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    producer.close();
  });

  it('past the shutdown deadline, lets another worker run the released job at once', async () => {
    const { queueUrl } = await freshQueues(sqs, 'shutdown-honoured', { maxReceiveCount: 3 });
    const lockKeyPrefix = `grace-${randomUUID().slice(0, 8)}:`;
    const attempts: number[] = [];
    const job = defineJob({
      name: 'long',
      args: z.object({}),
      handle: async (_a, ctx) => {
        attempts.push(ctx.attempt);
        if (ctx.attempt === 1) await sleepFor(30_000, undefined, { signal: ctx.signal });
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const first = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix, visibilityTimeoutSeconds: 6, shutdownTimeoutMs: 500 });
    const firstEvents = recordEvents(first);
    await first.start();
    await producer.enqueue(job, {});
    await eventually(() => firstEvents.count('job:start') === 1, 'the job to start');
    await first.stop();
    expect(firstEvents.of('job:handed-back')[0]?.reason).toMatch(/shutdown deadline/);

    const second = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix, visibilityTimeoutSeconds: 6 });
    const events = recordEvents(second);
    await second.start();
    // Well before one visibility timeout: the lock was released, not kept for an abandoned handler.
    await eventually(() => events.count('job:succeeded') === 1, 'the released job to run elsewhere', 5_000);
    await second.stop();
    // Run once more, and only once. (Its attempt may be 3: the first worker's open long poll can
    // receive the released message while stopping and hand it back, which is one more receive.)
    expect(attempts).toHaveLength(2);
    expect(attempts[1]).toBeGreaterThanOrEqual(2);
    expect(events.count('job:handed-back')).toBe(0);
    producer.close();
  });
});

describe('deferrals and the receive budget', () => {
  let memcached: PrivateMemcached | undefined;
  afterEach(async () => {
    await memcached?.stop();
    memcached = undefined;
  });

  it('failing closed through a long memcached outage: re-sent, never dead-lettered, run once it is back', async () => {
    memcached = await PrivateMemcached.start();
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'closed-long', { maxReceiveCount: 2 });
    const attempts: number[] = [];
    const job = defineJob({ name: 'work', args: z.object({}), handle: (_a, ctx) => void attempts.push(ctx.attempt) });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await memcached.stop();
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      memcached: memcached.servers,
      lockTimeoutMs: 200,
      lockFailClosed: true,
      visibilityTimeoutSeconds: 2,
    });
    const events = recordEvents(worker);
    await worker.start();
    const { jobId } = await producer.enqueue(job, {});
    // maxReceiveCount × visibility is 4 s: outlast it twice over.
    await eventually(() => events.count('job:resent') >= 2, 'the message to be re-sent at its last receive, twice', 30_000);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    await memcached.restart();
    await eventually(() => events.count('job:succeeded') === 1, 'the job to run once memcached is back', 30_000);
    await worker.stop();
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toBeGreaterThan(2); // ctx.attempt counts every receive, across re-sends
    expect(events.of('job:resent').every((e) => e.jobId === jobId)).toBe(true);
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    producer.close();
  });

  it('a second message with the same job id, while the first runs long, is deleted at once and never dead-lettered', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'copy-long', { maxReceiveCount: 2 });
    const lockKeyPrefix = `copy-${randomUUID().slice(0, 8)}:`;
    const runs: string[] = [];
    const job = defineJob({
      name: 'export',
      args: z.object({}),
      handle: async (_a, ctx) => {
        runs.push(ctx.messageId);
        await sleepFor(7_000); // several visibility timeouts, kept by the heartbeat
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const a = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix, visibilityTimeoutSeconds: 2, concurrency: 1, prefetch: 0 });
    const b = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix, visibilityTimeoutSeconds: 2, concurrency: 1, prefetch: 0 });
    const ea = recordEvents(a);
    const eb = recordEvents(b);
    await Promise.all([a.start(), b.start()]);
    await producer.enqueue(job, {}, { jobId: 'export-9' });
    await producer.enqueue(job, {}, { jobId: 'export-9' });
    await eventually(() => ea.count('job:succeeded') + eb.count('job:succeeded') === 1, 'the job to finish', 20_000);
    const duplicates = [...ea.of('job:duplicate'), ...eb.of('job:duplicate')];
    expect(duplicates.map((d) => d.state)).toEqual(['running']); // the copy, deleted while the first ran
    expect(runs).toHaveLength(1);
    // deletes are batched: wait for the success's delete to land rather than race it
    await eventually(async () => JSON.stringify(await queueCounts(sqs, queueUrl)) === JSON.stringify(empty), 'the queue to be empty');
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    producer.close();
  });

  it('the same message back while its job id is held under it: re-sent, its receives not counted and that run counted once, until the holder lets go; run once then, as attempt 1', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'same-msg', { maxReceiveCount: 2 });
    const lockKeyPrefix = `same-${randomUUID().slice(0, 8)}:`;
    const attempts: number[] = [];
    const job = defineJob({ name: 'import', args: z.object({}), handle: (_a, ctx) => void attempts.push(ctx.attempt) });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId, messageId } = await producer.enqueue(job, {});
    // Another consumer holds the job under this very message (a worker killed mid-run, its claim not lapsed yet).
    const other = memcachedClient();
    await other.set(`${lockKeyPrefix}${jobId}`, `running:another-consumer:${messageId}`, { expires: 120 });
    const worker = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix, visibilityTimeoutSeconds: 2 });
    const events = recordEvents(worker);
    await worker.start();
    // The re-sent copy is the same delivery: it waits for the holder too, rather than being deleted as a copy,
    // and the run holding the job id is counted unfinished once, however often its copies come back.
    await eventually(() => events.count('job:handed-back') >= 2, 'the message and its re-sent copy to be handed back', 20_000);
    for (const e of events.of('job:handed-back')) expect(e.reason).toContain('(1 unfinished run(s))');
    expect(events.count('job:duplicate')).toBe(0);
    await other.delete(`${lockKeyPrefix}${jobId}`); // the other consumer gives up without finishing
    await eventually(() => events.count('job:succeeded') === 1, 'the job to run', 20_000);
    await worker.stop();
    expect(attempts).toEqual([1]); // however many times it came back meanwhile
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    expect(await drain(sqs, dlqUrl)).toHaveLength(0);
    other.close();
    producer.close();
  });
});
