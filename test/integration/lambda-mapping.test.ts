import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { EmulatedMapping, type SqsEventRecord } from '../helpers/lambda-mapping.js';
import { freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';

/**
 * The emulated SQS event source mapping (test/helpers/lambda-mapping.ts) that the Lambda handler's
 * tests run on, checked on a real queue (LocalStack and moto) against what AWS documents: the
 * event has the fields of AWS's sample SQS event, with attribute values as text and binaries in
 * base64; records not named in batchItemFailures are deleted and the named ones come back with
 * their receive count raised; a function that throws, or names an item not in the batch or none,
 * fails the whole batch; a batching window gathers more than one receive's 10.
 */
const sqs = sqsClient();
afterAll(() => sqs.destroy());

/** The fields of one record of AWS's sample SQS event (Lambda developer guide, "Using Lambda with Amazon SQS"). */
const SAMPLE_RECORD_FIELDS = [
  'attributes',
  'awsRegion',
  'body',
  'eventSource',
  'eventSourceARN',
  'md5OfBody',
  'messageAttributes',
  'messageId',
  'receiptHandle',
];
const SAMPLE_SYSTEM_ATTRIBUTES = ['ApproximateFirstReceiveTimestamp', 'ApproximateReceiveCount', 'SenderId', 'SentTimestamp'];

async function sendSome(queueUrl: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const out = await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: `{"n":${n}}` }));
    ids.push(out.MessageId!);
  }
  return ids;
}

describe('the emulated SQS event source mapping', () => {
  it('hands the function the documented event: its fields, system attributes, message attributes as text and base64, the trace header', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-event');
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '{"v":1,"id":"e-1","job":"x","args":{}}',
        MessageAttributes: {
          'sqsjobs-job': { DataType: 'String', StringValue: 'x' },
          count: { DataType: 'Number', StringValue: '12' },
          blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 255]) },
        },
        MessageSystemAttributes: {
          AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' },
        },
      }),
    );
    const mapping = new EmulatedMapping(sqs, queueUrl);
    const seen: SqsEventRecord[] = [];
    const round = await mapping.deliver(async (event) => {
      seen.push(...event.Records);
      return { batchItemFailures: [] };
    });
    expect(round?.deleted).toHaveLength(1);
    const [r] = seen;
    for (const field of SAMPLE_RECORD_FIELDS) expect(r).toHaveProperty(field);
    for (const name of SAMPLE_SYSTEM_ATTRIBUTES) expect(typeof r!.attributes[name]).toBe('string');
    expect(r!.attributes.ApproximateReceiveCount).toBe('1');
    expect(r!.attributes.AWSTraceHeader).toBe('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    expect(r!.eventSource).toBe('aws:sqs');
    expect(r!.eventSourceARN).toMatch(/^arn:aws:sqs:[a-z0-9-]+:\d{12}:lambda-event-/);
    expect(r!.md5OfBody).toMatch(/^[0-9a-f]{32}$/);
    expect(r!.messageAttributes).toEqual({
      'sqsjobs-job': { stringValue: 'x', stringListValues: [], binaryListValues: [], dataType: 'String' },
      count: { stringValue: '12', stringListValues: [], binaryListValues: [], dataType: 'Number' },
      blob: { binaryValue: 'AAH/', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
    });
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('deletes the records not named as failures; the named ones come back, their receive count raised', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-partial', { visibilityTimeout: 2 });
    const ids = await sendSome(queueUrl, 5);
    const mapping = new EmulatedMapping(sqs, queueUrl, { batchSize: 5, windowSeconds: 1 });
    const round = await mapping.deliver(async (event) => ({
      batchItemFailures: event.Records.filter((r) => r.body === '{"n":1}' || r.body === '{"n":3}').map((r) => ({
        itemIdentifier: r.messageId,
      })),
    }));
    expect(round?.event.Records).toHaveLength(5);
    expect([...(round?.deleted ?? [])].sort()).toEqual([ids[0], ids[2], ids[4]].sort());
    await sleep(2_500);
    const again = await mapping.poll(2);
    expect(again?.Records.map((r) => r.body).sort()).toEqual(['{"n":1}', '{"n":3}']);
    expect(again?.Records.every((r) => r.attributes.ApproximateReceiveCount === '2')).toBe(true);
  });

  it.each([
    ['the function throws', async () => Promise.reject(new Error('boom'))],
    ['an item failure names a message not in the batch', async () => ({ batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] })],
    ['an item failure names no item', async () => ({ batchItemFailures: [{ itemIdentifier: '' }] })],
  ])('keeps the whole batch when %s', async (_why, handler) => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-whole', { visibilityTimeout: 2 });
    await sendSome(queueUrl, 3);
    const mapping = new EmulatedMapping(sqs, queueUrl, { batchSize: 3, windowSeconds: 1 });
    const round = await mapping.deliver(handler);
    expect(round?.deleted).toEqual([]);
    expect(round?.wholeBatchFailed).toBeDefined();
    await sleep(2_500);
    expect((await mapping.poll(2))?.Records).toHaveLength(3);
  });

  it('gathers a batch larger than one receive within its window', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-window');
    await sendSome(queueUrl, 25);
    const mapping = new EmulatedMapping(sqs, queueUrl, { batchSize: 25, windowSeconds: 3 });
    const round = await mapping.deliver(async () => undefined); // no failures named: all done
    expect(round?.event.Records).toHaveLength(25);
    expect(round?.deleted).toHaveLength(25);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
