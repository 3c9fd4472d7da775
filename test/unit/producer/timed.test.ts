import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { createProducer } from '../../../src/producer/producer.js';
import { cancelWith } from '../../../src/status/cancel.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { createWorker } from '../../../src/worker/worker.js';
import { eventually } from '../../helpers/stack.js';
import { UNIT_WORKER } from '../../helpers/worker.js';

/* Jobs put off beyond SQS's delay (runAt, delaySeconds over 900): refused where they cannot be kept, kept in the job store, sent on time. */

const ran: { jobId: string; at: number }[] = [];
const remind = defineJob({
  name: 'remind',
  args: z.object({ user: z.string() }),
  handle: (_args, ctx) => void ran.push({ jobId: ctx.jobId, at: Date.now() }),
});

function setup(options: Record<string, unknown> = {}) {
  const memory = new MemoryQueue();
  const url = memory.create('jobs', { deadLetterQueueUrl: memory.create('jobs-dlq'), maxReceiveCount: 5 });
  const store = new MemoryJobStore();
  const producer = createProducer({ queueUrl: url, jobs: [remind], queue: memory, store, ...options }, {});
  return { memory, url, store, producer };
}

describe('jobs put off beyond SQS’s delay', () => {
  it('are refused with the field and the rule: past a year, both runAt and delaySeconds, on FIFO, without a store that keeps them', async () => {
    const { producer } = setup();
    const inTwoYears = new Date(Date.now() + 2 * 365 * 86_400_000);
    await expect(producer.enqueue(remind, { user: 'a' }, { runAt: inTwoYears })).rejects.toThrow(
      /options\.runAt: must be .* within a year from now/,
    );
    await expect(producer.enqueue(remind, { user: 'a' }, { delaySeconds: 366 * 86_400 })).rejects.toThrow(
      /options\.delaySeconds: must be <= 31536000 \(a year\)/,
    );
    await expect(producer.enqueue(remind, { user: 'a' }, { runAt: new Date(), delaySeconds: 5 })).rejects.toThrow(
      /options\.runAt: give runAt or delaySeconds, not both/,
    );
    await expect(producer.enqueue(remind, { user: 'a' }, { runAt: 'tomorrow' })).rejects.toThrow(ValidationError);
    const memory = new MemoryQueue();
    const fifo = createProducer({ queueUrl: memory.create('jobs.fifo'), jobs: [remind], queue: memory }, {});
    await expect(fifo.enqueue(remind, { user: 'a' }, { runAt: new Date(Date.now() + 3_600_000) })).rejects.toThrow(
      /options\.runAt: FIFO queues do not take a per-message delay/,
    );
    const storeless = createProducer({ queueUrl: memory.create('plain'), jobs: [remind], queue: memory }, {});
    await expect(storeless.enqueue(remind, { user: 'a' }, { delaySeconds: 3_600 })).rejects.toThrow(
      /options\.delaySeconds: beyond 900 s \(SQS's delay limit\) needs the job store/,
    );
    const { producer: big } = setup({ maxMessageBytes: 1_048_576 });
    await expect(big.enqueue(remind, { user: 'x'.repeat(360_000) }, { delaySeconds: 3_600 })).rejects.toThrow(
      /options\.delaySeconds: a job kept in the job store until its time must be at most 350000 bytes/,
    );
    // Up to 900 s it is SQS's own delay, store or not.
    expect((await storeless.enqueue(remind, { user: 'a' }, { delaySeconds: 900 })).messageId).toBeDefined();
  });

  it('are kept in the job store, read scheduled, sent by a worker with the delay left and run on time; a cancel takes one out for good', async () => {
    const { memory, url, store, producer } = setup({ maxSqsDelaySeconds: 1 });
    const runAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_000);
    const kept = await producer.enqueue(remind, { user: 'ann' }, { runAt, track: true });
    const dropped = await producer.enqueue(remind, { user: 'bob' }, { delaySeconds: 4, track: true });
    expect(kept.messageId).toBeUndefined(); // no message yet: kept until its time
    expect(memory.peek(url)).toEqual([]);
    expect(await store.get(kept.jobId)).toMatchObject({ state: 'scheduled', nextAttemptAt: runAt.toISOString() });
    expect(await store.timed.getTimed(kept.jobId)).toMatchObject({ jobName: 'remind', dueMs: runAt.getTime(), tracked: true });
    const lock = new MemoryLock();
    const cancel = await cancelWith({ store, lock }, dropped.jobId);
    expect(cancel).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled', reason: 'cancelled before its time' } });
    expect(await store.timed.getTimed(dropped.jobId)).toBeUndefined();
    // Marked as any cancel is: a copy sent meanwhile, or the same id enqueued again, does not run either.
    expect(await lock.claim(dropped.jobId, 'some-run', 30)).toBe('cancelled');
    const worker = createWorker(
      { queues: [url], jobs: [remind], queue: memory, store, lock: new MemoryLock(), schedules: true, ...UNIT_WORKER },
      {},
    );
    await worker.start();
    await eventually(() => ran.some((r) => r.jobId === kept.jobId), 'the kept job ran');
    await new Promise((r) => setTimeout(r, 1_500)); // past the cancelled one's time
    await worker.stop();
    const run = ran.find((r) => r.jobId === kept.jobId)!;
    expect(run.at).toBeGreaterThanOrEqual(runAt.getTime()); // not before its time (SQS held it for the delay left)
    expect(ran.some((r) => r.jobId === dropped.jobId)).toBe(false);
    expect(await store.timed.getTimed(kept.jobId)).toBeUndefined();
    expect(await store.get(kept.jobId)).toMatchObject({ state: 'completed' });
  });

  it('enqueueMany keeps each one, by position', async () => {
    const { store, producer } = setup({ maxSqsDelaySeconds: 60 });
    const results = await producer.enqueueMany(remind, [{ user: 'a' }, { user: 'b' }], { delaySeconds: 3_600, jobIds: ['m-1', 'm-2'] });
    expect(results).toEqual([
      { jobId: 'm-1', messageId: undefined },
      { jobId: 'm-2', messageId: undefined },
    ]);
    expect((await store.timed.getTimed('m-2'))?.dueMs).toBeGreaterThan(Date.now() + 3_590_000);
    // The same job id again keeps what was kept (enqueue is idempotent by job id).
    await producer.enqueue(remind, { user: 'a' }, { delaySeconds: 7_200, jobId: 'm-1' });
    expect((await store.timed.getTimed('m-1'))?.dueMs).toBeLessThan(Date.now() + 3_700_000);
  });
});
