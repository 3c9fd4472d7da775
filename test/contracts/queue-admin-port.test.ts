import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { eventually, sqsClient } from '../helpers/stack.js';

/**
 * The queue admin port's contract (createQueues, the DLQ commands and stats rely on it), on the
 * local server this project runs (LocalStack or moto). There is no in-memory queue admin: tests
 * that provision queues use the real one, so nothing here can drift from a fake.
 */
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const admin = new SqsQueueAdmin(sqs);
const name = (what: string) => `admin-${what}-${randomUUID().slice(0, 8)}`;

describe('queue admin port contract: SqsQueueAdmin', () => {
  it('finds nothing for a queue that does not exist, and the queue it created', async () => {
    const n = name('find');
    expect(await admin.findQueue(n)).toBeUndefined();
    const url = await admin.createQueue(n, false);
    expect(await admin.findQueue(n)).toBe(url);
    const fifo = await admin.createQueue(`${n}.fifo`, true);
    expect(fifo.endsWith('.fifo')).toBe(true);
  });

  it('applies settings and reads back what it applied, the redrive policy as two halves', async () => {
    const dlq = await admin.createQueue(name('dlq'), false);
    const dlqArn = await admin.arnOf(dlq);
    expect(dlqArn).toMatch(/^arn:aws:sqs:[a-z0-9-]+:\d{12}:admin-dlq-/);
    expect(await admin.urlOfArn(dlqArn)).toBe(dlq);
    const url = await admin.createQueue(name('main'), false);
    await admin.applySettings(url, {
      visibilityTimeout: 45,
      messageRetentionSeconds: 3_600,
      maxReceiveCount: 4,
      deadLetterTargetArn: dlqArn,
    });
    expect(await admin.settings(url)).toMatchObject({
      visibilityTimeout: 45,
      messageRetentionSeconds: 3_600,
      maxReceiveCount: 4,
      deadLetterTargetArn: dlqArn,
    });
    // The queue port reads the same policy, as a DLQ URL.
    expect(await new SqsQueuePort(sqs).deadLetterTarget(url)).toEqual({ deadLetterQueueUrl: dlq, maxReceiveCount: 4 });
    await admin.applySettings(url, {}); // nothing given: nothing changed
    expect((await admin.settings(url)).visibilityTimeout).toBe(45);
  });

  it('counts visible, in-flight and delayed messages, and purge empties the queue', async () => {
    const url = await admin.createQueue(name('count'), false);
    const queue = new SqsQueuePort(sqs);
    for (const delaySeconds of [0, 0, 0, 600]) await queue.send(url, { body: 'x', attributes: {}, delaySeconds });
    await queue.receive(url, 1, 1, 60);
    await eventually(async () => {
      const c = await admin.counts(url);
      return c.visible === 2 && c.inFlight === 1 && c.delayed === 1;
    }, 'the counts settle at 2 visible, 1 in flight, 1 delayed');
    await admin.purge(url);
    await eventually(async () => (await admin.counts(url)).visible === 0, 'the queue is empty after a purge');
  });
});
