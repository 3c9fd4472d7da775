import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { z } from 'zod';
import { RetryLaterError, UnrecoverableError } from '../../src/core/errors.js';
import { defineJob, type JobContext } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { recordEvents, testWorker, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

describe('worker against SQS', () => {
  it('runs a job with its context and deletes its message', async () => {
    const { queueUrl } = await freshQueues(sqs, 'roundtrip');
    const contexts: JobContext[] = [];
    const seenArgs: unknown[] = [];
    const greet = defineJob({
      name: 'greet',
      args: z.object({ name: z.string(), times: z.number().default(1) }),
      handle: (args, ctx) => {
        seenArgs.push(args);
        contexts.push(ctx);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId, messageId } = await producer.enqueue(greet, { name: 'ada' }, { tenant: 'acme' });
    const worker = start({ queues: [queueUrl], jobs: [greet] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 1, 'the job to succeed');
    await worker.stop();
    expect(seenArgs).toEqual([{ name: 'ada', times: 1 }]);
    const ctx = contexts[0]!;
    expect([ctx.jobId, ctx.jobName, ctx.messageId, ctx.attempt, ctx.tenant, ctx.queueUrl]).toEqual([
      jobId,
      'greet',
      messageId,
      1,
      'acme',
      queueUrl,
    ]);
    expect(ctx.enqueuedAt).toBeInstanceOf(Date);
    expect(ctx.signal.aborted).toBe(false);
    const succeeded = events.of('job:succeeded')[0]!;
    expect(succeeded.waitMs).toBeGreaterThanOrEqual(0);
    expect(succeeded.processMs).toBeGreaterThanOrEqual(0);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('keeps a job 3x longer than the visibility timeout invisible with heartbeats, and deletes it once', async () => {
    const { queueUrl } = await freshQueues(sqs, 'heartbeat', { visibilityTimeout: 2 });
    let runs = 0;
    const slow = defineJob({
      name: 'slow',
      args: z.object({}),
      handle: async (_args, ctx) => {
        runs++;
        await sleepFor(6_000, undefined, { signal: ctx.signal });
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(slow, {});
    // One slot and no prefetch: the worker does not poll while the job runs, so the outside
    // consumer below is the only one that could take the message if the heartbeat failed.
    const worker = start({
      queues: [queueUrl],
      jobs: [slow],
      visibilityTimeoutSeconds: 2,
      heartbeatIntervalMs: 800,
      concurrency: 1,
      prefetch: 0,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:start') === 1, 'the job to start');
    // Another consumer keeps asking while the handler runs: the message must never show up.
    const stolen = [];
    while (events.count('job:succeeded') === 0) {
      stolen.push(...(await drain(sqs, queueUrl, 1)));
      await sleep(250);
    }
    expect(stolen).toHaveLength(0);
    await worker.stop();
    expect(runs).toBe(1);
    expect(events.count('heartbeat:lost')).toBe(0);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('makes a failed job visible again after the backoff delay, then runs it again', async () => {
    const { queueUrl } = await freshQueues(sqs, 'backoff');
    const flaky = defineJob({
      name: 'flaky',
      args: z.object({}),
      backoff: { baseMs: 3_000, jitter: 0 },
      handle: () => {
        throw new Error('downstream 503');
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(flaky, {});
    const worker = start({ queues: [queueUrl], jobs: [flaky] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:failed') === 1, 'the first failure');
    const failedAt = Date.now();
    await worker.stop();
    expect(events.of('job:failed')[0]).toMatchObject({ retryDelayMs: 3_000, attempt: 1 });
    // SQS hides it for the backoff delay ...
    expect(await drain(sqs, queueUrl)).toHaveLength(0);
    expect(await queueCounts(sqs, queueUrl)).toMatchObject({ visible: 0, inFlight: 1 });
    // ... then shows it again, with its receive count up.
    const [again] = await eventually(
      async () => {
        const got = await drain(sqs, queueUrl);
        return got.length > 0 ? got : undefined;
      },
      'the message to become visible again',
      10_000,
    );
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(2_000);
    expect(again?.Attributes?.ApproximateReceiveCount).toBe('2');
    producer.close();
  });

  it('dead-letters a job that fails on every attempt up to maxReceiveCount, with the reason and last error', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'exhaust', { maxReceiveCount: 2 });
    let attempts = 0;
    const broken = defineJob({
      name: 'broken',
      args: z.object({}),
      backoff: { baseMs: 1_000, factor: 1, jitter: 0 },
      handle: () => {
        attempts++;
        throw new Error(`boom ${attempts}`);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(broken, {});
    const worker = start({ queues: [queueUrl], jobs: [broken] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1, 'the job to be dead-lettered');
    await worker.stop();
    expect(attempts).toBe(2);
    expect(events.of('job:failed').map((f) => f.retryDelayMs)).toEqual([1_000, undefined]);
    const [dead] = await drain(sqs, dlqUrl);
    expect(JSON.parse(dead!.Body!).id).toBe(jobId);
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-reason']?.StringValue).toBe('retries-exhausted');
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-error']?.StringValue).toMatch(/attempt 2 of 2: Error: boom 2/);
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-source']?.StringValue).toBe(queueUrl);
    expect(dead?.MessageAttributes?.['sqsjobs-job']?.StringValue).toBe('broken');
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('sends UnrecoverableError to the DLQ on the first attempt', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'unrecoverable');
    const charge = defineJob({
      name: 'charge',
      args: z.object({ invoiceId: z.string() }),
      handle: (args) => {
        throw new UnrecoverableError(`invoice ${args.invoiceId} is cancelled`);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(charge, { invoiceId: 'inv-9' });
    const worker = start({ queues: [queueUrl], jobs: [charge] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1, 'the job to be dead-lettered');
    await worker.stop();
    const [dead] = await drain(sqs, dlqUrl);
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-reason']?.StringValue).toBe('unrecoverable');
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-error']?.StringValue).toBe('invoice inv-9 is cancelled');
    expect(dead?.MessageAttributes?.['sqsjobs-dlq-receive-count']?.StringValue).toBe('1');
    producer.close();
  });

  it('sends each kind of poison to the DLQ with its reason while healthy jobs keep flowing', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'poison');
    let healthy = 0;
    const ok = defineJob({ name: 'ok', args: z.object({ n: z.number() }), handle: () => void healthy++ });
    const poison: [string, string][] = [
      ['{not json', 'invalid-json'],
      ['{"v":2,"id":"p2","job":"ok","args":{"n":1}}', 'unsupported-version'],
      ['{"v":1,"id":"p3","job":"rm -rf","args":{}}', 'unknown-job'],
      ['{"v":1,"id":"p4","job":"ok","args":{"n":"one"}}', 'invalid-args'],
      ['[1,2,3]', 'not-an-envelope'],
    ];
    for (const [body] of poison) await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(
      ok,
      Array.from({ length: 10 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [ok] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 5 && healthy === 10, 'poison dead-lettered and healthy jobs done');
    await worker.stop();
    const dead = await drain(sqs, dlqUrl);
    const reasons = Object.fromEntries(dead.map((m) => [m.Body, m.MessageAttributes?.['sqsjobs-dlq-reason']?.StringValue]));
    expect(reasons).toEqual(Object.fromEntries(poison));
    const invalidArgs = dead.find((m) => m.Body === poison[3]![0]);
    expect(invalidArgs?.MessageAttributes?.['sqsjobs-dlq-error']?.StringValue).toMatch(/^args\.n: /);
    expect(events.count('job:failed')).toBe(0);
    // names a sender made up never become job names (metric dimensions): only registered ones do
    expect(new Set(events.of('job:dead-lettered').map((e) => e.jobName))).toEqual(new Set(['unknown', 'ok']));
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('aborts the signal at the job timeout and counts the attempt as a failure; RetryLaterError picks the delay', async () => {
    const { queueUrl } = await freshQueues(sqs, 'timeout');
    let sawAbort: unknown;
    const hang = defineJob({
      name: 'hang',
      args: z.object({}),
      timeoutMs: 300,
      handle: async (_args, ctx) => {
        await new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
      },
    });
    const later = defineJob({
      name: 'later',
      args: z.object({}),
      handle: (_a, ctx) => {
        sawAbort = ctx.signal.aborted;
        throw new RetryLaterError(7_000, 'rate limited');
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(hang, {});
    await producer.enqueue(later, {});
    const worker = start({ queues: [queueUrl], jobs: [hang, later] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:failed') === 2, 'both failures');
    await worker.stop();
    const byJob = Object.fromEntries(events.of('job:failed').map((f) => [f.jobName, f]));
    expect((byJob.hang?.error as { code?: string } | undefined)?.code).toBe('JOB_TIMEOUT');
    expect(byJob.hang?.retryDelayMs).toBeGreaterThan(0);
    expect(byJob.later?.retryDelayMs).toBe(7_000);
    expect(sawAbort).toBe(false);
    producer.close();
  });

  it('keeps working when an event listener throws', async () => {
    const { queueUrl } = await freshQueues(sqs, 'listener');
    let done = 0;
    const job = defineJob({ name: 'j', args: z.object({}), handle: () => void done++ });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(job, [{}, {}, {}]);
    const worker = start({ queues: [queueUrl], jobs: [job] });
    worker.on('job:start', () => {
      throw new Error('listener bug');
    });
    await worker.start();
    await eventually(() => done === 3, 'all three jobs');
    await worker.stop();
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('consumes several queues by weight', async () => {
    const main = await freshQueues(sqs, 'main');
    const low = await freshQueues(sqs, 'low');
    const order: string[] = [];
    const job = defineJob({ name: 'j', args: z.object({ q: z.string() }), handle: (a) => void order.push(a.q) });
    const toMain = createProducer({ queueUrl: main.queueUrl }, LOCAL_ENV);
    const toLow = createProducer({ queueUrl: low.queueUrl }, LOCAL_ENV);
    await toMain.enqueueMany(
      job,
      Array.from({ length: 12 }, () => ({ q: 'main' })),
    );
    await toLow.enqueueMany(
      job,
      Array.from({ length: 12 }, () => ({ q: 'low' })),
    );
    const worker = start({
      queues: [
        { url: main.queueUrl, weight: 3 },
        { url: low.queueUrl, weight: 1 },
      ],
      jobs: [job],
      concurrency: 1,
      prefetch: 20,
    });
    await worker.start();
    await eventually(() => order.length === 24, 'all jobs');
    await worker.stop();
    expect(order.filter((q) => q === 'main')).toHaveLength(12);
    toMain.close();
    toLow.close();
  });

  it('refuses to start on a queue without a dead-letter queue', async () => {
    const { CreateQueueCommand } = await import('@aws-sdk/client-sqs');
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `no-dlq-${Date.now()}` }));
    const job = defineJob({ name: 'j', args: z.object({}), handle: () => {} });
    const worker = testWorker({ queues: [QueueUrl!], jobs: [job] });
    await expect(worker.start()).rejects.toThrow(/has no RedrivePolicy.*queues create/);
    await worker.stop();
  });
});
