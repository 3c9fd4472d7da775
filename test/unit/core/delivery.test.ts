import { describe, expect, it } from 'vitest';
import {
  ATTR_ATTEMPTS_SPENT,
  ATTR_DEAD_LETTERED,
  ATTR_FIRST_SENT_AT,
  ATTR_ORIGIN,
  ATTR_PRIOR_RECEIVES,
  attemptOf,
  attemptsSpentOf,
  firstSentAt,
  isDeadLetteredCopy,
  originOf,
} from '../../../src/core/delivery.js';
import type { MessageAttributes, ReceivedMessage } from '../../../src/core/message.js';

const received = (attributes: MessageAttributes, receiveCount = 2): ReceivedMessage => ({
  queueUrl: 'http://memory.invalid/000000000000/jobs',
  messageId: 'm2',
  receiptHandle: 'h',
  body: '{}',
  receiveCount,
  sentAt: 5_000,
  groupId: undefined,
  attributes,
});
const num = (n: string) => ({ DataType: 'Number', StringValue: n });

describe('what a message carries across re-sends', () => {
  it('a first message: its own receive count, send time and id', () => {
    const m = received({});
    expect([attemptOf(m), firstSentAt(m), originOf(m), isDeadLetteredCopy(m)]).toEqual([2, 5_000, 'm2', false]);
  });

  it('a re-sent copy: the receives before it, the first send time and the first message id', () => {
    const m = received({
      [ATTR_PRIOR_RECEIVES]: num('4'),
      [ATTR_FIRST_SENT_AT]: num('1000'),
      [ATTR_ORIGIN]: { DataType: 'String', StringValue: 'm1' },
      [ATTR_DEAD_LETTERED]: { DataType: 'String', StringValue: 'true' },
    });
    expect([attemptOf(m), firstSentAt(m), originOf(m), isDeadLetteredCopy(m)]).toEqual([6, 1_000, 'm1', true]);
  });

  it('a copy re-sent to be dead-lettered: the receives its job spent; any other message: none', () => {
    expect(attemptsSpentOf(received({ [ATTR_ATTEMPTS_SPENT]: num('4') }))).toBe(4);
    expect(attemptsSpentOf(received({}))).toBeUndefined();
  });

  it.each(['-1', '1.5', 'lots', ''])('ignores a prior-receives attribute that is not a whole number >= 0 (%j)', (bad) => {
    expect(attemptOf(received({ [ATTR_PRIOR_RECEIVES]: num(bad) }))).toBe(2);
  });
});
