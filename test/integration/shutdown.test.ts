import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { testWorker } from '../helpers/worker.js';
import { spawnWorker } from '../helpers/worker-process.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());

const slow = defineJob({ name: 'slow', args: z.object({ ms: z.number() }), handle: () => {} });

function kill(child: ChildProcess, signal: NodeJS.Signals) {
  child.kill(signal);
}

describe('graceful shutdown', () => {
  it('on SIGTERM releases prefetched messages at once, finishes and deletes running ones, and exits 0', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sigterm', { visibilityTimeout: 60 });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(
      slow,
      Array.from({ length: 7 }, () => ({ ms: 2_500 })),
    );
    const w = spawnWorker(queueUrl, { CONCURRENCY: '2', PREFETCH: '5' });
    await eventually(() => w.count('start') === 2, 'two jobs running', 30_000);
    await eventually(async () => (await queueCounts(sqs, queueUrl)).inFlight === 7, 'five more held unstarted');

    kill(w.child, 'SIGTERM');
    const signalledAt = Date.now();
    // The five unstarted ones are visible to another consumer right away, not after 60 s.
    const released = await eventually(
      async () => {
        const got = await drain(sqs, queueUrl, 60);
        return got.length >= 5 ? got : undefined;
      },
      'the prefetched messages to be released',
      10_000,
    );
    expect(released).toHaveLength(5);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);

    expect(await w.exited).toBe(0);
    expect(w.count('succeeded')).toBe(2);
    expect(w.lines.find((l) => l.event === 'stopped')?.signalListeners).toBe(0);
    // Only the five this test holds remain: the two that ran were deleted.
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 5, delayed: 0 });
    producer.close();
  });

  it('on a second signal stops at once: running jobs are aborted and released', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sigterm2', { visibilityTimeout: 60 });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(slow, [{ ms: 60_000 }, { ms: 60_000 }]);
    const w = spawnWorker(queueUrl, { CONCURRENCY: '2', PREFETCH: '0' });
    await eventually(() => w.count('start') === 2, 'two jobs running', 30_000);
    kill(w.child, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    kill(w.child, 'SIGINT');
    expect(await w.exited).toBe(0);
    expect(w.count('handed-back')).toBe(2);
    expect(await drain(sqs, queueUrl)).toHaveLength(2); // visible again at once
    producer.close();
  });

  it('aborts running jobs at the shutdown deadline and releases them', async () => {
    const { queueUrl } = await freshQueues(sqs, 'deadline', { visibilityTimeout: 60 });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(slow, { ms: 60_000 });
    const w = spawnWorker(queueUrl, { CONCURRENCY: '1', PREFETCH: '0', SHUTDOWN_TIMEOUT_MS: '1000' });
    await eventually(() => w.count('start') === 1, 'the job running', 30_000);
    kill(w.child, 'SIGTERM');
    expect(await w.exited).toBe(0);
    expect(w.count('handed-back')).toBe(1);
    expect(await drain(sqs, queueUrl)).toHaveLength(1);
    producer.close();
  });

  it('stop() is one promise, and signal listeners come and go with the worker', async () => {
    const { queueUrl } = await freshQueues(sqs, 'listeners');
    const before = process.listenerCount('SIGTERM');
    const worker = testWorker({ queues: [queueUrl], jobs: [slow], handleSignals: true });
    await worker.start();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    const first = worker.stop();
    expect(worker.stop()).toBe(first);
    await first;
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});

describe('stopping a worker in the middle of a 20-second long poll', () => {
  it('idle: stop() ends the open poll instead of waiting it out', async () => {
    const { queueUrl } = await freshQueues(sqs, 'idle-stop');
    const worker = testWorker({ queues: [queueUrl], jobs: [slow], waitTimeSeconds: 20 });
    await worker.start();
    await sleep(500); // the poll is open on the server
    const stoppingAt = Date.now();
    await worker.stop();
    // Well before the poll could have ended on its own (20 s).
    expect(Date.now() - stoppingAt).toBeLessThan(5_000);
  });

  it('busy: the job being handled still completes and is deleted, then the open poll is ended', async () => {
    const { queueUrl } = await freshQueues(sqs, 'busy-stop', { visibilityTimeout: 60 });
    let release = () => {};
    const started = new Promise<void>((resolve) => {
      release = resolve;
    });
    const job = defineJob({
      name: 'slow-enough',
      args: z.object({}),
      handle: async () => {
        release();
        await sleep(1_500);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(job, {});
    producer.close();
    // Two slots: while the job runs, the worker has a poll open for the free one.
    const worker = testWorker({ queues: [queueUrl], jobs: [job], waitTimeSeconds: 20, concurrency: 2, prefetch: 0 });
    let succeededAt = Number.NaN;
    worker.on('job:succeeded', () => {
      succeededAt = Date.now();
    });
    await worker.start();
    await started;
    await worker.stop();
    expect(succeededAt).not.toBeNaN();
    // The open poll was ended once the job was done, not waited out (20 s).
    expect(Date.now() - succeededAt).toBeLessThan(5_000);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
