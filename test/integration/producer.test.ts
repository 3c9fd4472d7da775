import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EnqueueBatchError, PayloadTooLargeError, ValidationError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, drain, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';

const resize = defineJob({
  name: 'resize-image',
  args: z.object({ imageKey: z.string().min(1), width: z.number().int().positive() }),
  handle: () => {},
});
const note = defineJob({ name: 'note', args: z.object({ text: z.string() }), handle: () => {} });

const sqs = sqsClient();
afterAll(() => sqs.destroy());

describe('enqueue against SQS', () => {
  let queueUrl: string;
  beforeAll(async () => {
    ({ queueUrl } = await freshQueues(sqs, 'producer'));
  });

  it('puts the documented body and attributes in the queue', async () => {
    const producer = createProducer({ queueUrl, jobs: [resize] }, LOCAL_ENV);
    const result = await producer.enqueue(resize, { imageKey: 'uploads/a.png', width: 300 }, { tenant: 'acme' });
    const [m] = await drain(sqs, queueUrl);
    expect(m?.MessageId).toBe(result.messageId);
    const body = JSON.parse(m!.Body!);
    expect(Object.keys(body)).toEqual(['v', 'id', 'job', 'args', 'enqueuedAt', 'tenant']);
    expect(body).toMatchObject({
      v: 1,
      id: result.jobId,
      job: 'resize-image',
      args: { imageKey: 'uploads/a.png', width: 300 },
      tenant: 'acme',
    });
    expect(new Date(body.enqueuedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(m?.MessageAttributes?.['sqsjobs-job']?.StringValue).toBe('resize-image');
    expect(m?.MessageAttributes?.['sqsjobs-id']?.StringValue).toBe(result.jobId);
    // the tenant becomes the MessageGroupId (SQS fair queues on standard queues)
    expect(m?.Attributes?.MessageGroupId).toBe('acme');
    producer.close();
  });

  it('keeps a caller-given job id and accepts a registered name', async () => {
    const producer = createProducer({ queueUrl, jobs: [resize] }, LOCAL_ENV);
    const result = await producer.enqueue('resize-image', { imageKey: 'k', width: 1 }, { jobId: 'order-42.resize' });
    expect(result.jobId).toBe('order-42.resize');
    const [m] = await drain(sqs, queueUrl);
    expect(JSON.parse(m!.Body!).id).toBe('order-42.resize');
    producer.close();
  });

  it('delays a message when asked', async () => {
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(note, { text: 'later' }, { delaySeconds: 60 });
    expect(await drain(sqs, queueUrl)).toHaveLength(0);
    expect((await queueCounts(sqs, queueUrl)).delayed).toBe(1);
    producer.close();
  });
});

describe('enqueueMany against SQS', () => {
  it('lands 25 jobs as 25 messages, in batches, with their ids', async () => {
    const { queueUrl } = await freshQueues(sqs, 'many');
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const argsList = Array.from({ length: 25 }, (_, i) => ({ text: `n${i}` }));
    const results = await producer.enqueueMany(note, argsList, { jobIds: argsList.map((_, i) => `note-${i}`) });
    expect(results.map((r) => r.jobId)).toEqual(argsList.map((_, i) => `note-${i}`));
    const messages = await drain(sqs, queueUrl);
    expect(messages).toHaveLength(25);
    expect(new Set(messages.map((m) => JSON.parse(m.Body!).args.text))).toEqual(new Set(argsList.map((a) => a.text)));
    producer.close();
  });
});

describe('refusals happen before any network call', () => {
  const unreachable = { ...LOCAL_ENV, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' };

  it('refuses an oversized body with its size and the limit, and sends nothing', async () => {
    const { queueUrl } = await freshQueues(sqs, 'oversize');
    const producer = createProducer({ queueUrl, maxMessageBytes: 2048 }, LOCAL_ENV);
    const error = await producer.enqueue(note, { text: 'x'.repeat(4000) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as PayloadTooLargeError).limit).toBe(2048);
    expect((error as Error).message).toMatch(/over the limit of 2048 bytes.*reference/);
    await expect(producer.enqueueMany(note, [{ text: 'small' }, { text: 'y'.repeat(4000) }])).rejects.toThrow(PayloadTooLargeError);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });

  it('refuses the default 64 KiB limit being passed', async () => {
    const { queueUrl } = await freshQueues(sqs, 'oversize64');
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await expect(producer.enqueue(note, { text: 'x'.repeat(70_000) })).rejects.toThrow(/over the limit of 65536 bytes/);
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(0);
    producer.close();
  });

  it('names the field and the rule of invalid args, for one and for many', async () => {
    const producer = createProducer({ queueUrl: 'http://127.0.0.1:9/123456789012/nowhere' }, unreachable);
    const one = await producer.enqueue(resize, { imageKey: '', width: -1 } as never).catch((e: unknown) => e);
    expect(one).toBeInstanceOf(ValidationError);
    expect((one as ValidationError).issues.map((i) => i.field).sort()).toEqual(['args.imageKey', 'args.width']);
    const many = await producer
      .enqueueMany(resize, [
        { imageKey: 'a', width: 1 },
        { imageKey: 'b', width: 0 },
      ])
      .catch((e: unknown) => e);
    expect((many as ValidationError).issues[0]?.field).toBe('argsList[1].width');
    producer.close();
  });

  it('refuses args with characters SQS does not accept, naming the field', async () => {
    const producer = createProducer({ queueUrl: 'http://127.0.0.1:9/123456789012/nowhere' }, unreachable);
    await expect(producer.enqueue(note, { text: 'bad \uffff char' })).rejects.toThrow(/args\.text: contains U\+FFFF/);
    producer.close();
  });

  it('refuses unknown jobs and bad options with typed errors', async () => {
    const producer = createProducer({ queueUrl: 'http://127.0.0.1:9/123456789012/nowhere' }, unreachable);
    await expect(producer.enqueue('nope', {})).rejects.toMatchObject({ code: 'JOB_UNKNOWN' });
    // Beyond SQS's 900 s a job is kept in the job store: this producer has none.
    await expect(producer.enqueue(note, { text: 'a' }, { delaySeconds: 901 })).rejects.toThrow(
      /options\.delaySeconds: beyond 900 s \(SQS's delay limit\) needs the job store/,
    );
    await expect(producer.enqueue(note, { text: 'a' }, { jobId: 'has space' })).rejects.toThrow(/options\.jobId/);
    await expect(producer.enqueue(note, { text: 'a' }, { deduplicationId: 'd' })).rejects.toThrow(/only to FIFO/);
    await expect(producer.enqueue(note, { text: 'a' }, { bogus: 1 } as never)).rejects.toMatchObject({ code: 'OPTIONS_INVALID' });
    producer.close();
  });

  it('fails fast on a missing queue URL or a malformed endpoint', () => {
    expect(() => createProducer({}, {})).toThrow(/no queue URL/);
    expect(() => createProducer({ queueUrl: 'http://127.0.0.1:4566/1/q' }, { AWS_ENDPOINT_URL: 'not a url' })).toThrow(/AWS_ENDPOINT_URL/);
  });
});

describe('enqueue to FIFO queues', () => {
  it('sends the group id and uses the job id as the deduplication id', async () => {
    const { queueUrl } = await freshQueues(sqs, 'fifo', { name: 'x.fifo' });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(note, { text: 'a' }, { jobId: 'same-job', groupId: 'customer-7' });
    await producer.enqueue(note, { text: 'a' }, { jobId: 'same-job', groupId: 'customer-7' }); // deduplicated by SQS
    await producer.enqueue(note, { text: 'b' }, { tenant: 'acme', deduplicationId: 'explicit-dedupe' });
    const out = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }),
    );
    const messages = out.Messages ?? [];
    expect(messages).toHaveLength(2);
    const byText = Object.fromEntries(messages.map((m) => [JSON.parse(m.Body!).args.text, m.Attributes]));
    expect(byText.a).toMatchObject({ MessageGroupId: 'customer-7', MessageDeduplicationId: 'same-job' });
    expect(byText.b).toMatchObject({ MessageGroupId: 'acme', MessageDeduplicationId: 'explicit-dedupe' });
    await expect(producer.enqueue(note, { text: 'c' }, { delaySeconds: 5 })).rejects.toThrow(/FIFO queues do not take a per-message delay/);
    producer.close();
  });
});

it('reports a batch whose SQS calls fail as one EnqueueBatchError naming every entry', async () => {
  const producer = createProducer(
    { queueUrl: 'http://127.0.0.1:9/123456789012/nowhere' },
    { ...LOCAL_ENV, AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
  );
  const error = await producer
    .enqueueMany(
      note,
      Array.from({ length: 12 }, (_, i) => ({ text: String(i) })),
    )
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(EnqueueBatchError);
  expect((error as EnqueueBatchError).failed.map((f) => f.index)).toEqual(Array.from({ length: 12 }, (_, i) => i));
  expect((error as EnqueueBatchError).sent).toEqual([]);
  producer.close();
}, 60_000);
