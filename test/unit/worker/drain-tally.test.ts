import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MemoryDrainMeter } from '../../../src/testing/memory-drain-meter.js';
import { DeleteCoalescer } from '../../../src/worker/fate/coalescers.js';
import { DrainTally } from '../../../src/worker/drain-tally.js';
import { FakeQueuePort, message } from '../../helpers/fake-queue-port.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('DrainTally: the deletes SQS confirmed, added to the drain meter once a second', () => {
  it('adds one sum per queue per flush, only what SQS confirmed, and the rest on close', async () => {
    const meter = new MemoryDrainMeter();
    const add = vi.spyOn(meter, 'add');
    const tally = new DrainTally(meter, 1_000);
    const sqs = new FakeQueuePort();
    sqs.deleteAnswer = (e) =>
      e.receiptHandle === 'rh3' ? { code: 'ReceiptHandleIsInvalid', message: 'gone', senderFault: true } : undefined;
    const deletes = new DeleteCoalescer({ sqs, flushMs: 10, onFailure: () => {}, onConfirmed: (q, n) => tally.count(q, n) });
    const done = Promise.all(Array.from({ length: 25 }, (_, i) => deletes.delete(message(i + 1))));
    await vi.advanceTimersByTimeAsync(20);
    await done;
    expect(add).not.toHaveBeenCalled(); // not yet a second
    await vi.advanceTimersByTimeAsync(1_000);
    const url = message(1).queueUrl;
    expect(add.mock.calls).toEqual([[url, 24]]);
    expect(await meter.read(url)).toBe(24);
    tally.count(url, 5);
    await tally.close();
    expect(await meter.read(url)).toBe(29);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(add).toHaveBeenCalledTimes(2); // closed: no timer left
  });
});
