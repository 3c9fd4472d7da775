import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE } from '../../../src/core/dead-letter.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../../src/core/envelope.js';
import { describeDeadLetter } from '../../../src/ops/dlq.js';
import { listDeadLetters } from '../../../src/ops/dlq-scan.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

const text = (v: string) => ({ DataType: 'String', StringValue: v });
const base = { queueUrl: 'q', messageId: 'm1', receiptHandle: 'h', receiveCount: 1, sentAt: 0, groupId: undefined };

describe('describeDeadLetter', () => {
  it('reads our DLQ attributes first, the envelope second', () => {
    const letter = describeDeadLetter({
      ...base,
      body: JSON.stringify({ v: 1, id: 'body-id', job: 'body-job', args: {}, tenant: 'acme' }),
      attributes: {
        [ATTR_JOB]: text('refund'),
        [ATTR_JOB_ID]: text('r-1'),
        [ATTR_DLQ_REASON]: text('unrecoverable'),
        [ATTR_DLQ_ERROR]: text('card declined'),
        [ATTR_DLQ_SOURCE]: text('http://q/1/jobs'),
        [ATTR_DLQ_RECEIVE_COUNT]: { DataType: 'Number', StringValue: '3' },
        [ATTR_DLQ_AT]: text('2026-11-24T00:00:00.000Z'),
      },
    });
    expect(letter).toEqual({
      messageId: 'm1',
      jobName: 'refund',
      jobId: 'r-1',
      tenant: 'acme',
      receiveCount: 3,
      reason: 'unrecoverable',
      error: 'card declined',
      deadLetteredAt: '2026-11-24T00:00:00.000Z',
      sourceQueueUrl: 'http://q/1/jobs',
      sentAt: '1970-01-01T00:00:00.000Z',
    });
  });

  it('one SQS moved after maxReceiveCount reads `redrive`; a poisonous body leaves only what the attributes say', () => {
    expect(describeDeadLetter({ ...base, body: '{"v":1,"id":"x","job":"email"}', attributes: {} })).toMatchObject({
      reason: 'redrive',
      jobId: 'x',
      jobName: 'email',
      receiveCount: undefined,
    });
    expect(describeDeadLetter({ ...base, body: '\u0000garbage', attributes: {} })).toMatchObject({ jobId: undefined, reason: 'redrive' });
  });
});

describe('listDeadLetters', () => {
  it('lists without consuming: every message is visible again afterwards', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('dlq');
    for (let n = 0; n < 13; n++) await memory.send(dlq, { body: `{"v":1,"id":"d${n}","job":"refund"}`, attributes: {} });
    expect(await listDeadLetters(memory, dlq, 5)).toHaveLength(5);
    expect((await listDeadLetters(memory, dlq)).map((l) => l.jobId).sort()).toHaveLength(13);
    expect(memory.peek(dlq).every((m) => m.visibleInMs === 0)).toBe(true);
  });
});
