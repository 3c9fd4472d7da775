import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { createWorker } from '../../src/worker/worker.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_ENV, drain, eventually, freshQueues, memcachedClient, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

describe('dedupe lock in the worker', () => {
  it('runs one job id once when two copies arrive at once, and deletes both messages', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dup');
    const runs: string[] = [];
    const job = defineJob({
      name: 'once',
      args: z.object({}),
      handle: async (_a, ctx) => {
        runs.push(ctx.messageId);
        await sleepFor(1_500);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(job, {}, { jobId: 'order-1' });
    await producer.enqueue(job, {}, { jobId: 'order-1' });
    // two workers, as on two tasks, sharing one memcached
    const a = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix: `dup-shared:${queueUrl}`, visibilityTimeoutSeconds: 2 });
    const b = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix: `dup-shared:${queueUrl}`, visibilityTimeoutSeconds: 2 });
    const ea = recordEvents(a);
    const eb = recordEvents(b);
    await Promise.all([a.start(), b.start()]);
    await eventually(
      async () => (await queueCounts(sqs, queueUrl)).visible + (await queueCounts(sqs, queueUrl)).inFlight === 0,
      'both messages deleted',
      30_000,
    );
    expect(runs).toHaveLength(1);
    const duplicates = [...ea.of('job:duplicate'), ...eb.of('job:duplicate')];
    // the second message carries the same job id while the first runs: it is deleted as a copy
    expect(duplicates.map((d) => d.state)).toEqual(['running']);
    producer.close();
  });

  it('deletes a redelivery of a completed job without running it', async () => {
    const { queueUrl } = await freshQueues(sqs, 'redeliver');
    let runs = 0;
    const job = defineJob({ name: 'count', args: z.object({}), handle: () => void runs++ });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await producer.enqueue(job, {}, { jobId: 'invoice-77' });
    await eventually(() => events.count('job:succeeded') === 1, 'first run');
    await producer.enqueue(job, {}, { jobId: 'invoice-77' });
    await eventually(() => events.count('job:duplicate') === 1, 'the duplicate');
    await worker.stop();
    expect(runs).toBe(1);
    expect(events.of('job:duplicate')[0]?.state).toBe('completed');
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('aborts the handler when another consumer takes the job, and leaves the message to it', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lost');
    const prefix = `lost-${randomUUID().slice(0, 8)}:`;
    let abortReason: unknown;
    const job = defineJob({
      name: 'long',
      args: z.object({}),
      handle: async (_a, ctx) => {
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        abortReason = ctx.signal.reason;
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(job, {}, { jobId: 'export-5' });
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      lockKeyPrefix: prefix,
      visibilityTimeoutSeconds: 2,
      heartbeatIntervalMs: 500,
      concurrency: 1,
      prefetch: 0,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:start') === 1, 'the job to start');
    // Another consumer (say, after a long pause of this one) now owns the job id.
    const other = memcachedClient();
    await other.set(`${prefix}export-5`, 'running:another-consumer', { expires: 60 });
    await eventually(() => events.count('heartbeat:lost') === 1, 'the lease to be lost');
    expect((abortReason as { code?: string }).code).toBe('LEASE_LOST');
    expect(events.of('heartbeat:lost')[0]?.reason).toMatch(/held by another consumer/);
    // This worker neither deletes nor releases the message, nor frees the other consumer's lock.
    expect(events.count('job:succeeded') + events.count('job:failed')).toBe(0);
    await worker.stop();
    const back = await eventually(
      async () => {
        const got = await drain(sqs, queueUrl);
        return got.length > 0 ? got : undefined;
      },
      'the message to come back when its visibility runs out',
      10_000,
    );
    expect(back).toHaveLength(1);
    expect((await other.get(`${prefix}export-5`)).value?.toString()).toBe('running:another-consumer');
    other.close();
    producer.close();
  });

  describe('memcached outage', () => {
    let memcached: PrivateMemcached;
    afterEach(() => memcached?.stop());

    it('keeps completing jobs while memcached is down, and dedupes again once it is back', async () => {
      memcached = await PrivateMemcached.start();
      const { queueUrl } = await freshQueues(sqs, 'outage');
      const done: string[] = [];
      const job = defineJob({ name: 'work', args: z.object({}), handle: (_a, ctx) => void done.push(ctx.jobId) });
      const producer = createProducer({ queueUrl }, LOCAL_ENV);
      // A timeout long enough that a loaded machine's slow answer is not taken for an outage.
      const worker = start({ queues: [queueUrl], jobs: [job], memcached: memcached.servers, lockTimeoutMs: 2_000 });
      const events = recordEvents(worker);
      await worker.start();
      await producer.enqueueMany(job, [{}, {}, {}], { jobIds: ['a1', 'a2', 'a3'] });
      await eventually(() => done.length === 3, 'jobs before the outage');

      await memcached.stop();
      await producer.enqueueMany(job, [{}, {}, {}], { jobIds: ['b1', 'b2', 'b3'] });
      await eventually(() => done.length === 6, 'jobs during the outage');
      expect(events.count('lock:unavailable')).toBe(1); // warned once per outage
      expect(events.count('job:lock-unavailable')).toBe(3);

      await memcached.restart();
      await producer.enqueue(job, {}, { jobId: 'c1' });
      await eventually(() => done.includes('c1'), 'a job after the outage');
      expect(events.count('lock:restored')).toBe(1);
      await producer.enqueue(job, {}, { jobId: 'c1' });
      await eventually(() => events.count('job:duplicate') === 1, 'the lock to catch a duplicate again');
      await worker.stop();
      expect(done.sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
      producer.close();
    });

    it('leaves jobs queued while memcached is down when failing closed', async () => {
      memcached = await PrivateMemcached.start();
      const { queueUrl } = await freshQueues(sqs, 'closed');
      let runs = 0;
      const job = defineJob({ name: 'work', args: z.object({}), handle: () => void runs++ });
      const producer = createProducer({ queueUrl }, LOCAL_ENV);
      await memcached.stop();
      const worker = start({ queues: [queueUrl], jobs: [job], memcached: memcached.servers, lockTimeoutMs: 200, lockFailClosed: true });
      const events = recordEvents(worker);
      await worker.start();
      await producer.enqueue(job, {});
      await eventually(() => events.count('job:handed-back') === 1, 'the job to be released');
      await worker.stop();
      expect(runs).toBe(0);
      expect(events.of('job:handed-back')[0]?.reason).toMatch(/failing closed/);
      expect((await queueCounts(sqs, queueUrl)).inFlight).toBe(1); // hidden for a while, still in the queue
      producer.close();
    });
  });
});

describe('a worker without memcached', () => {
  it('warns once at start that dedupe is off, and says how to turn it on', async () => {
    const { queueUrl } = await freshQueues(sqs, 'no-memcached');
    const warnings: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as { msg: string }) });
    const job = defineJob({ name: 'plain', args: z.object({}), handle: () => {} });
    // No memcached option and no SQS_JOBS_MEMCACHED in the environment.
    const { SQS_JOBS_MEMCACHED: _unset, ...env } = LOCAL_ENV;
    const worker = createWorker(
      { queues: [queueUrl], jobs: [job], waitTimeSeconds: 1, handleSignals: false, logger, metrics: { sink: 'off' } },
      env,
    );
    await worker.start();
    await worker.start();
    await worker.stop();
    const dedupe = warnings.filter((w) => /memcached/.test(w.msg));
    expect(dedupe).toHaveLength(1);
    expect(dedupe[0]!.msg).toMatch(/no memcached configured .*SQS_JOBS_MEMCACHED.*without the dedupe lock/);
  });
});
