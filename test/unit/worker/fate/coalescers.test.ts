import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DeleteCoalescer, ResendCoalescer, VisibilityCoalescer } from '../../../../src/worker/fate/coalescers.js';
import { FakeQueuePort, message } from '../../../helpers/fake-queue-port.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('DeleteCoalescer', () => {
  it('sends a full batch at once and the rest after the flush interval', async () => {
    const sqs = new FakeQueuePort();
    const acks = new DeleteCoalescer({ sqs, flushMs: 50, onFailure: () => {} });
    const done = Array.from({ length: 13 }, (_, i) => acks.delete(message(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect(sqs.deleteCalls.map((c) => c.entries.length)).toEqual([10]);
    await vi.advanceTimersByTimeAsync(50);
    expect(sqs.deleteCalls.map((c) => c.entries.length)).toEqual([10, 3]);
    expect(await Promise.all(done)).toEqual(Array(13).fill(true));
  });

  it('keeps queues apart', async () => {
    const sqs = new FakeQueuePort();
    const acks = new DeleteCoalescer({ sqs, flushMs: 10, onFailure: () => {} });
    void acks.delete(message(1, 'http://h/1/a'));
    void acks.delete(message(2, 'http://h/1/b'));
    await acks.flush();
    expect(sqs.deleteCalls.map((c) => c.queueUrl).sort()).toEqual(['http://h/1/a', 'http://h/1/b']);
  });

  it('retries transient failures, reports what cannot be deleted, and resolves every delete', async () => {
    const sqs = new FakeQueuePort();
    sqs.deleteAnswer = (e, call) => {
      if (e.receiptHandle === 'rh1' && call === 1) return { code: 'InternalError', message: 'try again', senderFault: false };
      if (e.receiptHandle === 'rh2') return { code: 'ReceiptHandleIsInvalid', message: 'stale', senderFault: true };
      return undefined;
    };
    const failures: string[] = [];
    const acks = new DeleteCoalescer({ sqs, flushMs: 10, onFailure: (m, reason) => failures.push(`${m.messageId} ${reason}`) });
    const results = [acks.delete(message(1)), acks.delete(message(2)), acks.delete(message(3))];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.all(results)).toEqual([true, false, true]);
    expect(failures).toEqual(['m2 ReceiptHandleIsInvalid stale']);
    expect(sqs.deleteCalls.map((c) => c.entries.map((e) => e.receiptHandle))).toEqual([['rh1', 'rh2', 'rh3'], ['rh1']]);
  });

  it('gives up after three failed calls and reports each message', async () => {
    const sqs = new FakeQueuePort();
    sqs.deleteAnswer = () => 'throw';
    const failures: string[] = [];
    const acks = new DeleteCoalescer({ sqs, flushMs: 10, onFailure: (m) => failures.push(m.messageId) });
    const result = acks.delete(message(1));
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await result).toBe(false);
    expect(sqs.deleteCalls).toHaveLength(3);
    expect(failures).toEqual(['m1']);
  });
});

describe('VisibilityCoalescer', () => {
  it('coalesces hand-backs into ChangeMessageVisibilityBatch calls, each entry with its own timeout', async () => {
    const sqs = new FakeQueuePort();
    const batcher = new VisibilityCoalescer({ sqs, flushMs: 50 });
    const done = Array.from({ length: 12 }, (_, i) => batcher.change(message(i), i + 1));
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(50);
    expect(await Promise.all(done)).toEqual(Array(12).fill(undefined));
    expect(sqs.visibilityCalls.map((c) => c.entries.length)).toEqual([10, 2]);
    expect(sqs.visibilityCalls.flatMap((c) => c.entries.map((e) => e.visibilityTimeout))).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
  });

  it('makes unstarted messages visible at once, ten to a call per queue, without waiting for the flush timer', async () => {
    const sqs = new FakeQueuePort();
    const batcher = new VisibilityCoalescer({ sqs, flushMs: 60_000 });
    const other = { ...message(99), queueUrl: 'http://q/other' };
    const done = batcher.changeNow([...Array.from({ length: 11 }, (_, i) => message(i)), other], 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(await Promise.all(done)).toEqual(Array(12).fill(undefined));
    expect(sqs.visibilityCalls.map((c) => [c.queueUrl, c.entries.length])).toEqual([
      [message(0).queueUrl, 10],
      [message(0).queueUrl, 1],
      ['http://q/other', 1],
    ]);
  });
});

describe('ResendCoalescer', () => {
  const copy = (body: string) => ({ body, attributes: { 'sqsjobs-origin': { DataType: 'String', StringValue: 'o' } }, delaySeconds: 3 });

  it('sends deferred copies in SendMessageBatch calls of ten, to the queue each came from', async () => {
    const sqs = new FakeQueuePort();
    const resends = new ResendCoalescer({ sqs, flushMs: 50 });
    const done = Array.from({ length: 12 }, (_, i) => resends.resend(message(i), copy(`b${i}`)));
    await vi.advanceTimersByTimeAsync(50);
    expect(sqs.sendBatchCalls.map((c) => c.entries.length)).toEqual([10, 2]);
    expect(sqs.sendBatchCalls[1]!.entries.map((e) => e.message.body)).toEqual(['b10', 'b11']);
    expect(sqs.sendBatchCalls[0]!.entries[0]!.message.delaySeconds).toBe(3);
    expect(await Promise.all(done)).toEqual(Array(12).fill(undefined));
  });

  it('keeps a batch within SQS payload limit: large copies go in calls of their own', async () => {
    const sqs = new FakeQueuePort();
    const resends = new ResendCoalescer({ sqs, flushMs: 10 });
    const big = 'x'.repeat(100_000);
    void Promise.all([0, 1, 2, 3].map((i) => resends.resend(message(i), copy(big))));
    await resends.flush();
    // 262,144 bytes a batch: two copies of 100 KB fit, a third does not.
    expect(sqs.sendBatchCalls.map((c) => c.entries.length)).toEqual([2, 2]);
  });

  it('retries a transient refusal and answers why for a copy SQS will not take', async () => {
    const sqs = new FakeQueuePort();
    let calls = 0;
    sqs.sendAnswer = (m) => {
      if (m.body === 'bad') return { code: 'InvalidMessageContents', message: 'no', senderFault: true };
      if (m.body === 'flaky' && calls++ === 0) return { code: 'InternalError', message: 'again', senderFault: false };
      return undefined;
    };
    const resends = new ResendCoalescer({ sqs, flushMs: 10 });
    const results = [resends.resend(message(1), copy('flaky')), resends.resend(message(2), copy('bad'))];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await Promise.all(results)).toEqual([undefined, 'InvalidMessageContents no']);
    expect(sqs.sendBatchCalls.map((c) => c.entries.map((e) => e.message.body))).toEqual([['flaky', 'bad'], ['flaky']]);
  });

  it('does not send again after a call that threw (SQS may have taken it): answers why for each copy', async () => {
    const sqs = new FakeQueuePort();
    sqs.sendAnswer = () => 'throw';
    const resends = new ResendCoalescer({ sqs, flushMs: 10 });
    const results = [resends.resend(message(1), copy('a')), resends.resend(message(2), copy('b'))];
    await vi.advanceTimersByTimeAsync(1_000);
    const refusals = await Promise.all(results);
    expect(refusals).toHaveLength(2);
    for (const r of refusals) expect(r).toEqual(expect.any(String));
    expect(sqs.sendBatchCalls).toHaveLength(1);
  });
});
