import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { recordEvents, testWorker, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

const slow = defineJob({ name: 'slow', args: z.object({}), handle: async (_a, ctx) => sleepFor(2_000, undefined, { signal: ctx.signal }) });

describe('capacity', () => {
  it('never holds more than concurrency + prefetch messages, however many queues poll', async () => {
    const pairs = await Promise.all([1, 2, 3].map(() => freshQueues(sqs, 'cap')));
    for (const p of pairs) {
      const producer = createProducer({ queueUrl: p.queueUrl }, LOCAL_ENV);
      await producer.enqueueMany(
        slow,
        Array.from({ length: 8 }, () => ({})),
      );
      producer.close();
    }
    const worker = start({ queues: pairs.map((p) => p.queueUrl), jobs: [slow], concurrency: 2, prefetch: 1 });
    const events = recordEvents(worker);
    await worker.start();
    // Until the first job ends, everything SQS counts in flight is held by this worker (later,
    // settled messages awaiting their batched delete also count, by design).
    let most = 0;
    while (events.count('job:succeeded') === 0) {
      const held = (await Promise.all(pairs.map((p) => queueCounts(sqs, p.queueUrl)))).reduce((n, c) => n + c.inFlight, 0);
      if (events.count('job:succeeded') === 0) most = Math.max(most, held);
      await sleep(20);
    }
    expect(most).toBe(3);
  });

  it('keeps polling the other queues when one queue keeps failing', async () => {
    const broken = await freshQueues(sqs, 'gone');
    const healthy = await freshQueues(sqs, 'healthy');
    const job = defineJob({ name: 'j', args: z.object({}), handle: () => {} });
    const worker = start({ queues: [broken.queueUrl, healthy.queueUrl], jobs: [job], concurrency: 1, prefetch: 0 });
    const events = recordEvents(worker);
    await worker.start();
    await sqs.send(new DeleteQueueCommand({ QueueUrl: broken.queueUrl }));
    await eventually(() => events.count('error') >= 2, 'receives from the deleted queue to fail');
    const producer = createProducer({ queueUrl: healthy.queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(job, [{}, {}, {}]);
    await eventually(() => events.count('job:succeeded') === 3, 'the healthy queue to be served', 20_000);
    producer.close();
  });

  it('stop() before start() has finished starts nothing and leaves no listener behind', async () => {
    const { queueUrl } = await freshQueues(sqs, 'early-stop');
    const before = process.listenerCount('SIGTERM');
    const worker = testWorker({ queues: [queueUrl], jobs: [slow], handleSignals: true });
    const started = worker.start();
    await worker.stop();
    await started;
    expect(process.listenerCount('SIGTERM')).toBe(before);
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(slow, {});
    await sleep(1_500);
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(1); // nobody took it
    producer.close();
  });

  it('keeps the lock of a handler that ignores its signal until the lock TTL ends', async () => {
    const { queueUrl } = await freshQueues(sqs, 'abandon');
    const stubborn = defineJob({ name: 'stubborn', args: z.object({}), timeoutMs: 200, handle: () => sleepFor(3_000) });
    const worker = start({
      queues: [queueUrl],
      jobs: [stubborn],
      lockKeyPrefix: `abandon-${queueUrl.slice(-8)}:`,
      concurrency: 1,
      prefetch: 0,
    });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(stubborn, {}, { jobId: 'stubborn-1' });
    await eventually(() => events.count('job:failed') === 1, 'the timeout');
    const { memcachedClient } = await import('../helpers/stack.js');
    const mc = memcachedClient();
    await sleep(300); // settle has run
    const { value } = await mc.get(`abandon-${queueUrl.slice(-8)}:stubborn-1`);
    expect(value?.toString()).toMatch(/^running:/); // kept, not released
    mc.close();
    producer.close();
  });
});
