import { describe, expect, it } from 'vitest';
import {
  ATTR_DLQ_AT,
  ATTR_DLQ_ERROR,
  ATTR_DLQ_REASON,
  ATTR_DLQ_RECEIVE_COUNT,
  ATTR_DLQ_SOURCE,
  ATTR_REPLAY,
  carriedAttributes,
  deadLetterMessage,
} from '../../../src/core/dead-letter.js';
import { ATTR_UNFINISHED_RUNS } from '../../../src/core/delivery.js';
import type { ReceivedMessage } from '../../../src/core/message.js';

const text = (v: string) => ({ DataType: 'String', StringValue: v });
const received = (queueUrl: string, attributes: ReceivedMessage['attributes'] = {}): ReceivedMessage => ({
  queueUrl,
  messageId: 'm1',
  receiptHandle: 'h',
  body: '{"v":1}',
  receiveCount: 5,
  sentAt: 0,
  groupId: queueUrl.endsWith('.fifo') ? 'g1' : undefined,
  attributes,
});

describe('the message sent to the DLQ', () => {
  it('keeps the body and says why: reason, error, source, receive count and time', () => {
    const out = deadLetterMessage(
      received('http://q/1/jobs', { 'sqsjobs-job': text('refund') }),
      'unrecoverable',
      'card declined',
      new Date(0),
    );
    expect(out.body).toBe('{"v":1}');
    expect(out.attributes).toEqual({
      'sqsjobs-job': text('refund'),
      [ATTR_DLQ_REASON]: text('unrecoverable'),
      [ATTR_DLQ_ERROR]: text('card declined'),
      [ATTR_DLQ_SOURCE]: text('http://q/1/jobs'),
      [ATTR_DLQ_RECEIVE_COUNT]: { DataType: 'Number', StringValue: '5' },
      [ATTR_DLQ_AT]: text('1970-01-01T00:00:00.000Z'),
    });
    expect(out.deduplicationId).toBeUndefined();
  });

  it("leaves the job's unfinished runs behind: a copy moved back by any means (a console redrive too) starts with none", () => {
    const out = deadLetterMessage(
      received('http://q/1/jobs', { [ATTR_UNFINISHED_RUNS]: text('3 tok-3'), keep: text('x') }),
      'retries-exhausted',
      'd',
    );
    expect(out.attributes?.[ATTR_UNFINISHED_RUNS]).toBeUndefined();
    expect(out.attributes?.keep).toEqual(text('x'));
  });

  it('on FIFO: keeps the group, with a deduplication id per receive', () => {
    const out = deadLetterMessage(received('http://q/1/jobs.fifo'), 'retries-exhausted', 'x');
    expect([out.groupId, out.deduplicationId]).toEqual(['g1', 'm1-5']);
  });

  it('makes the error text safe for SQS: characters it refuses replaced, at most 1,000, never empty', () => {
    const long = deadLetterMessage(received('http://q/1/jobs'), 'unrecoverable', `a\u0000b${'x'.repeat(2_000)}`);
    const error = long.attributes[ATTR_DLQ_ERROR]?.StringValue ?? '';
    expect(error.startsWith('a?b')).toBe(true);
    expect(error).toHaveLength(1_000);
    expect(deadLetterMessage(received('http://q/1/jobs'), 'unrecoverable', '').attributes[ATTR_DLQ_ERROR]?.StringValue).toBe('(empty)');
  });
});

describe('carriedAttributes', () => {
  it("keeps the sender's attributes that fit in SQS's 10 beside ours, the replay marker first", () => {
    const sender = Object.fromEntries([...Array.from({ length: 8 }, (_, i) => [`a${i}`, text(String(i))]), [ATTR_REPLAY, text('r1')]]);
    const ours = { x: text('1'), y: text('2'), z: text('3'), w: text('4'), v: text('5') };
    const kept = carriedAttributes(sender, ours);
    expect(Object.keys(kept)).toEqual([ATTR_REPLAY, 'a0', 'a1', 'a2', 'a3']);
    expect(carriedAttributes({ x: text('theirs') }, ours)).toEqual({}); // ours win
  });
});
