import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HELD_PERIOD_MS } from '../../../src/ports/drain-meter.js';
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
    // A delete after a re-send does not end the job (its copy is queued): not counted.
    const more = Promise.all([deletes.delete(message(90), false), deletes.delete(message(91))]);
    await vi.advanceTimersByTimeAsync(20);
    await more;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await meter.read(url)).toBe(25);
    tally.count(url, 5);
    await tally.close();
    expect(await meter.read(url)).toBe(30);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(add).toHaveBeenCalledTimes(3); // closed: no timer left
  });

  it('adds what the worker holds unstarted once per held period, at its first flush: each period sums each worker once', async () => {
    vi.setSystemTime(5 * HELD_PERIOD_MS + 100);
    const meter = new MemoryDrainMeter();
    const addHeld = vi.spyOn(meter, 'addHeld');
    const tally = new DrainTally(meter, 1_000);
    let held = 4;
    tally.watch(() => [
      ['a', held],
      ['b', 0],
    ]);
    await vi.advanceTimersByTimeAsync(1_000); // first flush, in period 5
    held = 9;
    await vi.advanceTimersByTimeAsync(1_000); // still period 5: not added again
    expect(await meter.readHeld('a', 5)).toBe(4);
    expect(await meter.readHeld('b', 5)).toBeUndefined(); // none held: no call adds 0
    await vi.advanceTimersByTimeAsync(1_000); // period 6 begins at 6 × 3000: its first flush
    expect(await meter.readHeld('a', 6)).toBe(9);
    expect(addHeld.mock.calls.filter(([url]) => url === 'a')).toHaveLength(2);
    await tally.close();
    await vi.advanceTimersByTimeAsync(10 * HELD_PERIOD_MS);
    expect(addHeld.mock.calls.filter(([url]) => url === 'a')).toHaveLength(2); // stopped: it holds nothing to report
  });

  it('adds to each held period once, even when the clock steps back into one it added to; a flush slower than half a period is refused', async () => {
    let now = 7 * HELD_PERIOD_MS;
    const meter = new MemoryDrainMeter();
    const tally = new DrainTally(meter, 1_000, () => now);
    tally.watch(() => [['a', 3]]);
    await tally.flush();
    now = 8 * HELD_PERIOD_MS;
    await tally.flush();
    now = 7 * HELD_PERIOD_MS + 10; // NTP stepped the clock back
    await tally.flush();
    expect([await meter.readHeld('a', 7), await meter.readHeld('a', 8)]).toEqual([3, 3]);
    await tally.close();
    expect(() => new DrainTally(meter, HELD_PERIOD_MS)).toThrow(RangeError);
  });

  it('a meter that rejects loses those counts, and nothing else: no unhandled rejection, later counts go on', async () => {
    const meter = new MemoryDrainMeter();
    let fail = true;
    const real = meter.add.bind(meter);
    meter.add = async (url, n) => (fail ? Promise.reject(new Error('memcached: ECONNRESET')) : real(url, n));
    const tally = new DrainTally(meter, 1_000);
    tally.count('q', 3);
    await tally.flush();
    fail = false;
    tally.count('q', 4);
    await tally.close();
    expect(await meter.read('q')).toBe(4);
  });
});
