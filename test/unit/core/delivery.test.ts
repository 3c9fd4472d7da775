import { describe, expect, it } from 'vitest';
import {
  ATTR_DEAD_LETTERED,
  ATTR_FIRST_SENT_AT,
  ATTR_ORIGIN,
  ATTR_PRIOR_RECEIVES,
  ATTR_UNFINISHED_RUNS,
  attemptOf,
  firstSentAt,
  isDeadLetteredCopy,
  originOf,
  unfinishedRunsOf,
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

  it("the runs of the job that never finished: as a copy carries them (the last one's token too), none on any other message", () => {
    const text = (v: string) => received({ [ATTR_UNFINISHED_RUNS]: { DataType: 'String', StringValue: v } });
    expect(unfinishedRunsOf(text('3 tok-3'))).toEqual({ runs: 3, last: 'tok-3' });
    expect(unfinishedRunsOf(text('2'))).toEqual({ runs: 2, last: undefined });
    for (const bad of ['', 'x', '-1 t', '1.5']) expect(unfinishedRunsOf(text(bad)), bad).toEqual({ runs: 0, last: undefined });
    expect(unfinishedRunsOf(received({}))).toEqual({ runs: 0, last: undefined });
  });

  it.each(['-1', '1.5', 'lots', ''])('ignores a prior-receives attribute that is not a whole number >= 0 (%j)', (bad) => {
    expect(attemptOf(received({ [ATTR_PRIOR_RECEIVES]: num(bad) }))).toBe(2);
  });
});
