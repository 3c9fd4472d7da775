import { afterAll, describe, expect, it } from 'vitest';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import type { QueuePort } from '../../src/ports/queue.js';
import { MemoryQueue } from '../../src/testing/memory-queue.js';
import { freshQueues, sleep, sqsClient } from '../helpers/stack.js';

/**
 * The queue port's contract: what the worker relies on from SQS. It runs against the in-memory
 * queue tests hand the worker, and against the SDK adapter on the real local server, so the fake
 * cannot drift from what the server does.
 */
interface Subject {
  readonly port: QueuePort;
  /** A new queue with a redrive policy (maxReceiveCount 3), and its DLQ's URL. */
  queue(): Promise<{ url: string; dlqUrl: string }>;
  /** A new queue without a redrive policy. */
  bare(): Promise<string>;
  /** Whether the server refuses a receipt handle from before the latest receive. */
  readonly refusesStaleHandles: boolean;
  /** Whether the server keeps an AWSTraceHeader sent with SendMessageBatch. */
  readonly batchKeepsTraceHeader: boolean;
}

const sqs = sqsClient();
afterAll(() => sqs.destroy());

const memory = new MemoryQueue();
let n = 0;
const subjects: [string, Subject][] = [
  [
    'in-memory queue',
    {
      port: memory,
      queue: async () => {
        const dlqUrl = memory.create(`c${n}-dlq`);
        return { url: memory.create(`c${n++}`, { deadLetterQueueUrl: dlqUrl, maxReceiveCount: 3 }), dlqUrl };
      },
      bare: async () => memory.create(`bare-${n++}`),
      refusesStaleHandles: true,
      batchKeepsTraceHeader: true,
    },
  ],
  [
    `SDK adapter on ${process.env.SQS_JOBS_TEST_STACK ?? 'the local stack'}`,
    {
      port: new SqsQueuePort(sqs, sqs),
      queue: async () => {
        const pair = await freshQueues(sqs, 'contract', { maxReceiveCount: 3 });
        return { url: pair.queueUrl, dlqUrl: pair.dlqUrl };
      },
      bare: async () => (await freshQueues(sqs, 'contract-bare')).dlqUrl, // a DLQ has no redrive policy of its own
      // moto and LocalStack accept a stale receipt handle; ElasticMQ and AWS refuse it
      refusesStaleHandles: process.env.SQS_JOBS_TEST_STACK === 'elasticmq',
      batchKeepsTraceHeader: process.env.SQS_JOBS_TEST_STACK !== 'moto',
    },
  ],
];

describe.each(subjects)('queue port contract: %s', (_name, s) => {
  const text = { DataType: 'String', StringValue: 'resize' };

  it('hands out what was sent, with its attributes and a receive count of 1', async () => {
    const { url } = await s.queue();
    await s.port.send(url, { body: '{"v":1}', attributes: { 'sqsjobs-job': text } });
    const [m, ...rest] = await s.port.receive(url, 10, 1, 30);
    expect(rest).toHaveLength(0);
    expect(m).toMatchObject({ queueUrl: url, body: '{"v":1}', receiveCount: 1 });
    expect(m!.attributes['sqsjobs-job']?.StringValue).toBe('resize');
    expect(m!.messageId).not.toBe('');
    expect(Math.abs(m!.sentAt - Date.now())).toBeLessThan(60_000);
  });

  it('keeps an X-Ray trace header sent with a message (SendMessage, and SendMessageBatch where the server does)', async () => {
    const { url } = await s.queue();
    const header = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';
    await s.port.send(url, { body: 'one', attributes: {}, awsTraceHeader: header });
    await s.port.sendBatch(url, [{ id: 'a', message: { body: 'two', attributes: {}, awsTraceHeader: header } }]);
    await s.port.send(url, { body: 'none', attributes: {} });
    const got = new Map<string, string | undefined>();
    for (let i = 0; i < 5 && got.size < 3; i++) for (const m of await s.port.receive(url, 10, 1, 30)) got.set(m.body, m.awsTraceHeader);
    expect(got.get('one')).toBe(header);
    // moto 5.2 drops MessageSystemAttributes in SendMessageBatch; SQS, LocalStack and the in-memory queue keep them.
    expect(got.get('two')).toBe(s.batchKeepsTraceHeader ? header : undefined);
    expect(got.get('none')).toBeUndefined();
  });

  it('hides a received message for its visibility timeout; visibility 0 hands it back, counted again', async () => {
    const { url } = await s.queue();
    await s.port.send(url, { body: 'a', attributes: {} });
    const [m] = await s.port.receive(url, 10, 1, 30);
    expect(await s.port.receive(url, 10, 0, 30)).toHaveLength(0);
    expect(await s.port.changeVisibilityBatch(url, [{ id: '0', receiptHandle: m!.receiptHandle, visibilityTimeout: 0 }])).toEqual([]);
    const [again] = await s.port.receive(url, 10, 1, 30);
    expect(again).toMatchObject({ messageId: m!.messageId, receiveCount: 2 });
  });

  it('deletes in batches of up to 10 and answers only the failures', async () => {
    const { url } = await s.queue();
    for (let i = 0; i < 10; i++) await s.port.send(url, { body: String(i), attributes: {} });
    const got = [];
    for (let tries = 0; got.length < 10 && tries < 10; tries++) got.push(...(await s.port.receive(url, 10, 1, 30)));
    expect(got).toHaveLength(10);
    expect(
      await s.port.deleteBatch(
        url,
        got.map((m, i) => ({ id: String(i), receiptHandle: m.receiptHandle })),
      ),
    ).toEqual([]);
    expect(await s.port.receive(url, 10, 0, 30)).toHaveLength(0);
  });

  it('classifies a receipt handle that holds nothing as a lost lease', async () => {
    const { url } = await s.queue();
    await s.port.send(url, { body: 'a', attributes: {} });
    const [m] = await s.port.receive(url, 10, 1, 30);
    await s.port.deleteBatch(url, [{ id: '0', receiptHandle: m!.receiptHandle }]);
    const failures = await s.port.changeVisibilityBatch(url, [{ id: '7', receiptHandle: m!.receiptHandle, visibilityTimeout: 10 }]);
    if (failures.length > 0) expect(failures).toEqual([expect.objectContaining({ id: '7', kind: 'lease-lost' })]);
    if (s.refusesStaleHandles) expect(failures).toHaveLength(1);
  });

  it('classifies a receipt handle from before the latest receive as a lost lease (another consumer holds the message)', async () => {
    const { url } = await s.queue();
    await s.port.send(url, { body: 'a', attributes: {} });
    const [first] = await s.port.receive(url, 10, 1, 1);
    await sleep(1_500); // its visibility lapses: the message goes to the next receive
    const [second] = await s.port.receive(url, 10, 2, 30);
    expect(second).toMatchObject({ messageId: first!.messageId, receiveCount: 2 });
    const failures = await s.port.changeVisibilityBatch(url, [{ id: '3', receiptHandle: first!.receiptHandle, visibilityTimeout: 30 }]);
    if (failures.length > 0) expect(failures).toEqual([expect.objectContaining({ id: '3', kind: 'lease-lost' })]);
    if (s.refusesStaleHandles) {
      expect(failures).toHaveLength(1);
      // The holder's handle still works.
      expect(await s.port.deleteBatch(url, [{ id: '0', receiptHandle: second!.receiptHandle }])).toEqual([]);
    }
  });

  it('keeps a delayed message back until its delay passes', async () => {
    const { url } = await s.queue();
    await s.port.send(url, { body: 'later', attributes: {}, delaySeconds: 2 });
    expect(await s.port.receive(url, 10, 0, 30)).toHaveLength(0);
    await sleep(2_500);
    expect((await s.port.receive(url, 10, 1, 30)).map((m) => m.body)).toEqual(['later']);
  });

  it('ends a long poll at once when its signal aborts, handing out nothing', async () => {
    const { url } = await s.queue();
    const abort = new AbortController();
    const startedAt = Date.now();
    const receiving = s.port.receive(url, 10, 20, 30, abort.signal).then(
      (messages) => messages,
      (error: unknown) => error,
    );
    await sleep(300);
    abort.abort();
    const answer = await receiving;
    // Well before the 20-second poll could have ended on its own.
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    if (Array.isArray(answer)) expect(answer).toEqual([]);
    else expect(answer).toMatchObject({ name: 'AbortError' });
  });

  it('reads the redrive policy: the DLQ and maxReceiveCount, or none', async () => {
    const { url, dlqUrl } = await s.queue();
    expect(await s.port.deadLetterTarget(url)).toEqual({ deadLetterQueueUrl: dlqUrl, maxReceiveCount: 3 });
    expect(await s.port.deadLetterTarget(await s.bare())).toBeUndefined();
  });
});
