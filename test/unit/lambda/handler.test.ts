import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ATTR_DLQ_REASON } from '../../../src/core/dead-letter.js';
import { defineJob } from '../../../src/core/job.js';
import { createLambdaHandler } from '../../../src/lambda/handler.js';
import type { SqsEventRecord } from '../../../src/lambda/event.js';
import { messageOf, queueUrlOfArn } from '../../../src/lambda/record.js';
import { createProducer } from '../../../src/producer/producer.js';
import { deliverToLambda } from '../../../src/testing/lambda.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

/*
 * The Lambda handler without servers, as a user's own tests run it: a MemoryQueue, the in-memory
 * lock, and sqs-jobs/testing's deliverToLambda in the mapping's place. The same rules on real
 * queues: test/integration/lambda-handler.test.ts.
 */
const silent = pino({ level: 'silent' });
const args = z.object({ n: z.number().int() });

function setup(handle: (n: number) => unknown, metrics: 'off' | 'emf' = 'off') {
  const queue = new MemoryQueue();
  const dlqUrl = queue.create('work-dlq');
  const queueUrl = queue.create('work', { deadLetterQueueUrl: dlqUrl, maxReceiveCount: 3 });
  const job = defineJob({ name: 'job', args, backoff: { baseMs: 0, jitter: 0 }, handle: ({ n }) => handle(n) });
  const handler = createLambdaHandler(
    {
      jobs: [job],
      queues: [queueUrl],
      queue,
      lock: new MemoryLock(),
      logger: silent,
      ...(metrics === 'off' ? { metrics: { sink: 'off' } } : {}),
    },
    {},
  );
  const producer = createProducer({ queueUrl, jobs: [job], queue }, {});
  return { queue, queueUrl, dlqUrl, job, handler, producer };
}

afterEach(() => vi.restoreAllMocks());

describe('createLambdaHandler with deliverToLambda (no servers)', () => {
  it('runs each record; reports the failed one, which comes back and runs again', async () => {
    const seen: number[] = [];
    let failOnce = true;
    const { queue, queueUrl, job, handler, producer } = setup((n) => {
      seen.push(n);
      if (n === 2 && failOnce) {
        failOnce = false;
        throw new Error('once');
      }
    });
    await producer.enqueueMany(job, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const first = await deliverToLambda(handler, queue, queueUrl);
    expect(first.records).toHaveLength(3);
    expect(first.failed).toHaveLength(1);
    expect(first.records.find((r) => r.messageId === first.failed[0])!.body).toContain('"n":2');
    const again = await deliverToLambda(handler, queue, queueUrl);
    expect(again.records.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['2']);
    expect(again.failed).toEqual([]);
    expect(seen.sort()).toEqual([1, 2, 2, 3]);
    expect((await deliverToLambda(handler, queue, queueUrl)).records).toEqual([]);
  });

  it('poison goes to the DLQ with its reason and is reported done', async () => {
    const { queue, queueUrl, dlqUrl, handler } = setup(() => {});
    await queue.send(queueUrl, { body: '{"v":1,"id":"x","job":"nope","args":{}}', attributes: {} });
    const round = await deliverToLambda(handler, queue, queueUrl);
    expect(round.failed).toEqual([]);
    const [dead] = await queue.receive(dlqUrl, 10, 0, 30);
    expect(dead!.attributes[ATTR_DLQ_REASON]?.StringValue).toBe('unknown-job');
  });

  it('writes its metrics to stdout as EMF by default, at the end of each invocation', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const { queue, queueUrl, job, handler, producer } = setup(() => {}, 'emf');
    await producer.enqueue(job, { n: 1 });
    await deliverToLambda(handler, queue, queueUrl);
    vi.restoreAllMocks();
    const emf = lines
      .map((l) => JSON.parse(l) as { _aws?: { CloudWatchMetrics: { Metrics: { Name: string }[] }[] } })
      .filter((l) => l._aws);
    const names = emf.flatMap((l) => l._aws!.CloudWatchMetrics.flatMap((m) => m.Metrics.map((x) => x.Name)));
    expect(names).toEqual(expect.arrayContaining(['WaitTime', 'ProcessTime', 'Succeeded']));
  });
});

describe('a record as the walk sees it', () => {
  const record: SqsEventRecord = {
    messageId: 'm-1',
    receiptHandle: 'rh',
    body: '{}',
    attributes: { ApproximateReceiveCount: '3', SentTimestamp: '1700000000000', MessageGroupId: 'g', AWSTraceHeader: 'Root=1-abc' },
    messageAttributes: {
      text: { stringValue: 'x', dataType: 'String' },
      blob: { binaryValue: 'AAH/', dataType: 'Binary' },
    },
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:work',
  };

  it('keeps the receive count, the send time, the group, the trace header and every attribute', () => {
    const m = messageOf(record, 'https://sqs.eu-west-1.amazonaws.com/123456789012/work');
    expect(m).toMatchObject({ receiveCount: 3, sentAt: 1_700_000_000_000, groupId: 'g', awsTraceHeader: 'Root=1-abc' });
    expect(m.attributes.text).toEqual({ DataType: 'String', StringValue: 'x' });
    expect([...(m.attributes.blob!.BinaryValue ?? [])]).toEqual([0, 1, 255]);
  });

  it("finds its queue from the ARN: the configured one of that account and name, else AWS's URL", () => {
    const local = 'http://127.0.0.1:4566/123456789012/work';
    expect(queueUrlOfArn(record.eventSourceARN, [local])).toBe(local);
    expect(queueUrlOfArn(record.eventSourceARN, [])).toBe('https://sqs.eu-west-1.amazonaws.com/123456789012/work');
    expect(() => queueUrlOfArn('arn:aws:sns:eu-west-1:1:t', [])).toThrow(/not an SQS queue ARN/);
  });
});
