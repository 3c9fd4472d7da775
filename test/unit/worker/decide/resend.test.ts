import { describe, expect, it } from 'vitest';
import { ATTR_UNFINISHED_RUNS, carriedRateSlot, unfinishedRunsOf } from '../../../../src/core/delivery.js';
import {
  ATTR_FIRST_SENT_AT,
  ATTR_ORIGIN,
  ATTR_PRIOR_RECEIVES,
  attemptOf,
  firstSentAt,
  isDeadLetteredCopy,
  originOf,
} from '../../../../src/core/delivery.js';
import { atReceiveLimit, resentMessage } from '../../../../src/worker/decide/resend.js';
import type { ReceivedMessage } from '../../../../src/core/message.js';
import { ATTR_REPLAY, deadLetterMessage } from '../../../../src/core/dead-letter.js';

const base: ReceivedMessage = {
  queueUrl: 'http://127.0.0.1:4566/000000000000/jobs',
  messageId: 'm-1',
  receiptHandle: 'r',
  body: '{"v":1}',
  receiveCount: 3,
  sentAt: 1_000,
  groupId: undefined,
  attributes: { 'sqsjobs-id': { DataType: 'String', StringValue: 'job-1' } },
};

/** A received message whose attributes are those `resentMessage` gave its copy. */
const resentAs = (from: ReceivedMessage, o: Parameters<typeof resentMessage>[2]): ReceivedMessage => ({
  ...from,
  attributes: resentMessage(from, 0, o).attributes,
});

const asReceived = (from: ReceivedMessage, messageId: string): ReceivedMessage => {
  const out = resentMessage(from, 0);
  return { ...from, messageId, receiveCount: 1, sentAt: 9_000, attributes: out.attributes };
};

describe('re-sending a message with no receive left', () => {
  it('is due when the receive count reaches the redrive limit, never without one', () => {
    expect(atReceiveLimit(base, 3)).toBe(true);
    expect(atReceiveLimit(base, 4)).toBe(false);
    expect(atReceiveLimit(base, undefined)).toBe(false);
  });

  it("carries the job's unfinished runs over any re-send, even with the sender's attributes filling the rest", () => {
    const crowded: ReceivedMessage = {
      ...base,
      attributes: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: 'x' }])),
    };
    const marked = asReceived(resentAs(crowded, { unfinishedRuns: { runs: 2, last: 'tok-2' } }), 'm-2');
    expect(unfinishedRunsOf(marked)).toEqual({ runs: 2, last: 'tok-2' });
    const deferred = asReceived(resentAs(marked, { countThisReceive: false }), 'm-3');
    expect(unfinishedRunsOf(deferred)).toEqual({ runs: 2, last: 'tok-2' });
    expect(Object.keys(deferred.attributes)).toHaveLength(10);
    expect(resentMessage(base, 0).attributes[ATTR_UNFINISHED_RUNS]).toBeUndefined();
  });

  it('keeps the body and attributes, and carries the attempt, first send time and origin over re-sends', () => {
    const copy = resentMessage(base, 30);
    expect(copy.body).toBe(base.body);
    expect(copy.attributes['sqsjobs-id']?.StringValue).toBe('job-1');
    expect(copy.delaySeconds).toBe(30);
    const once = asReceived(base, 'm-2');
    expect(attemptOf(once)).toBe(4);
    expect(firstSentAt(once)).toBe(1_000);
    expect(originOf(once)).toBe('m-1');
    const twice = asReceived({ ...once, receiveCount: 2 }, 'm-3');
    expect(attemptOf(twice)).toBe(6);
    expect(originOf(twice)).toBe('m-1');
    expect(twice.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('5');
    expect(twice.attributes[ATTR_FIRST_SENT_AT]?.StringValue).toBe('1000');
    expect(twice.attributes[ATTR_ORIGIN]?.StringValue).toBe('m-1');
  });

  it("carries a deferred job's rate slot, read back when it returns; a copy re-sent otherwise carries none", () => {
    const deferred = resentMessage(base, 900, { countThisReceive: false, rateSlotAt: 1_700_000_123_456.4 });
    expect(carriedRateSlot({ ...base, attributes: deferred.attributes })).toBe(1_700_000_123_456);
    expect(carriedRateSlot({ ...base, attributes: resentMessage(base, 5).attributes })).toBeUndefined();
  });

  it('does not count the receive of a job that did not run (a deferral: its tenant at its cap)', () => {
    const deferred = resentMessage(base, 5, { countThisReceive: false });
    expect(deferred.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('2');
    expect(attemptOf({ ...base, receiveCount: 1, attributes: deferred.attributes })).toBe(3); // its next run is attempt 3, as it would have been
  });

  it('caps the delay at 900 s, and on FIFO sends no delay but a new deduplication id in the same group', () => {
    expect(resentMessage(base, 4_000).delaySeconds).toBe(900);
    const fifo = resentMessage({ ...base, queueUrl: 'http://h/1/jobs.fifo', groupId: 'g' }, 30);
    expect(fifo.delaySeconds).toBeUndefined();
    expect(fifo.groupId).toBe('g');
    expect(fifo.deduplicationId).toBe('m-1-resent-3');
  });

  it('keeps at most 10 attributes, ours first', () => {
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: String(i) }]));
    const copy = resentMessage({ ...base, attributes: many }, 0);
    expect(Object.keys(copy.attributes)).toHaveLength(10);
    expect(copy.attributes[ATTR_ORIGIN]?.StringValue).toBe('m-1');
  });

  it("keeps a DLQ replay's mark before any other sender attribute, re-sent and dead-lettered alike", () => {
    const many = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`a${i}`, { DataType: 'String', StringValue: String(i) }]));
    const replayed = { ...base, attributes: { ...many, [ATTR_REPLAY]: { DataType: 'String', StringValue: 'replay-1' } } };
    expect(resentMessage(replayed, 0).attributes[ATTR_REPLAY]?.StringValue).toBe('replay-1');
    const letter = deadLetterMessage(replayed, 'unrecoverable', 'no');
    expect(Object.keys(letter.attributes)).toHaveLength(10);
    expect(letter.attributes[ATTR_REPLAY]?.StringValue).toBe('replay-1');
  });

  it('marks a copy of a message already in the DLQ (to be counted, never run), and keeps the mark over re-sends', () => {
    const copy: ReceivedMessage = { ...base, messageId: 'm-2', attributes: resentMessage(base, 5, { deadLettered: true }).attributes };
    expect(isDeadLetteredCopy(copy)).toBe(true);
    expect(isDeadLetteredCopy({ ...copy, attributes: resentMessage(copy, 5).attributes })).toBe(true);
    expect(isDeadLetteredCopy(base)).toBe(false);
    expect(isDeadLetteredCopy(asReceived(base, 'm-3'))).toBe(false);
  });

  it('ignores a carried value that is not a count', () => {
    expect(attemptOf({ ...base, attributes: { [ATTR_PRIOR_RECEIVES]: { DataType: 'Number', StringValue: 'x' } } })).toBe(3);
  });
});
