import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../../src/core/batch-job.js';
import { ValidationError } from '../../../../src/core/errors.js';
import { BatchBuffer, type Held } from '../../../../src/worker/batch/batches.js';

interface Item extends Held {
  readonly n: number;
  lost?: boolean;
}

const job = (o: { maxSize: number; maxWaitMs: number; minSize?: number; name?: string }) =>
  defineBatchJob({ name: o.name ?? 'index', args: z.object({}), handle: () => undefined, ...o });
const at = (heldAt: number, n = heldAt, queueUrl = 'q'): Item => ({ heldAt, n, queueUrl });
const never = () => false;
const sizes = (batches: { items: Item[] }[]) => batches.map((b) => b.items.length);

describe('BatchBuffer: one rule per row', () => {
  it('full: a batch of maxSize is due at once; beyond it, one slice per maxSize', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 3, maxWaitMs: 60_000 });
    for (let i = 0; i < 7; i++) b.add(j, 'k', at(0, i));
    const due = b.takeDue(0, never);
    expect(sizes(due)).toEqual([3, 3]);
    expect(due[0]!.items.map((i) => i.n)).toEqual([0, 1, 2]); // in the order received
    expect(b.held).toBe(1);
  });

  it('stale: a batch is due once its oldest item has been held maxWaitMs, whatever its size', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 100, maxWaitMs: 1_000 });
    b.add(j, 'k', at(0));
    b.add(j, 'k', at(900));
    expect(b.takeDue(999, never)).toEqual([]);
    expect(b.nextDueAt()).toBe(1_000);
    expect(sizes(b.takeDue(1_000, never))).toEqual([2]);
    expect(b.nextDueAt()).toBeUndefined();
  });

  it('early: minSize items are due once the queue of the newest item had nothing more; below minSize they wait', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 100, minSize: 3, maxWaitMs: 60_000 });
    b.add(j, 'k', at(0));
    b.add(j, 'k', at(0));
    expect(b.takeDue(10, () => true)).toEqual([]); // 2 < minSize
    b.add(j, 'k', at(0));
    expect(b.takeDue(10, never)).toEqual([]); // the queue may still have more
    expect(sizes(b.takeDue(10, (url) => url === 'q'))).toEqual([3]);
  });

  it('a look that found nothing due does not hide a batch that turns due later: by size, by time, or put back', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 2, maxWaitMs: 1_000 });
    b.add(j, 'k', at(0));
    expect(b.takeDue(10, never)).toEqual([]);
    b.add(j, 'k', at(20)); // full now
    expect(sizes(b.takeDue(20, never))).toEqual([2]);
    b.add(j, 'other', at(30));
    expect(b.takeDue(40, never)).toEqual([]);
    expect(b.nextDueAt()).toBe(1_030);
    const [stale] = b.takeDue(1_030, never);
    b.putBack(stale!, 1_100);
    expect(b.takeDue(1_099, never)).toEqual([]);
    expect(b.nextDueAt()).toBe(1_100);
    expect(sizes(b.takeDue(1_100, never))).toEqual([1]);
  });

  it('keys and jobs are batched apart', () => {
    const b = new BatchBuffer<Item>();
    const one = job({ maxSize: 2, maxWaitMs: 60_000 });
    const other = job({ maxSize: 2, maxWaitMs: 60_000, name: 'other' });
    b.add(one, 'a', at(0, 1));
    b.add(one, 'b', at(0, 2));
    b.add(other, 'a', at(0, 3));
    expect(b.batches).toBe(3);
    b.add(one, 'a', at(0, 4));
    const due = b.takeDue(0, never);
    expect(due.map((d) => [d.job.name, d.key, d.items.map((i) => i.n)])).toEqual([['index', 'a', [1, 4]]]);
  });

  it('budget: takeOldest takes the batch whose oldest item came first, whatever its size', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 100, maxWaitMs: 60_000 });
    b.add(j, 'late', at(50));
    b.add(j, 'early', at(10));
    b.add(j, 'late', at(60));
    expect(b.takeOldest(0)!.key).toBe('early');
    expect(b.takeOldest(0)!.items.map((i) => i.heldAt)).toEqual([50, 60]);
    expect(b.takeOldest(0)).toBeUndefined();
  });

  it('putBack: a batch whose key is busy elsewhere goes back ahead of newer items and is not due before retryAt', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 2, maxWaitMs: 60_000 });
    b.add(j, 'k', at(0, 1));
    b.add(j, 'k', at(0, 2));
    const [batch] = b.takeDue(0, never);
    b.add(j, 'k', at(5, 3));
    b.putBack(batch!, 100);
    expect(b.held).toBe(3);
    expect(b.takeDue(99, never)).toEqual([]);
    expect(b.takeOldest(99)).toBeUndefined(); // not even at the budget: its key is busy elsewhere
    expect(b.nextDueAt()).toBe(100);
    expect(b.nextRetryAt(99)).toBe(100); // at the budget the worker asks again then
    expect(b.nextRetryAt(100)).toBeUndefined();
    expect(b.takeDue(100, never).map((d) => d.items.map((i) => i.n))).toEqual([[1, 2]]);
  });

  it('putBack behind: items held back from a call (their tenant at its cap) go behind newer items and delay nothing', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 2, maxWaitMs: 60_000 });
    b.add(j, 'k', at(0, 1));
    b.add(j, 'k', at(0, 2));
    const [capped] = b.takeDue(0, never);
    b.add(j, 'k', at(5, 3));
    b.putBack(capped!, 100, undefined, true);
    expect(b.held).toBe(3);
    expect(b.takeDue(0, never).map((d) => d.items.map((i) => i.n))).toEqual([[3, 1]]);
    // With no batch of their key open, they wait for their retry time.
    const alone = new BatchBuffer<Item>();
    alone.putBack(capped!, 200, undefined, true);
    expect(alone.takeDue(199, never)).toEqual([]);
    expect(alone.takeDue(200, never).map((d) => d.items.map((i) => i.n))).toEqual([[1, 2]]);
  });

  it("putBack with a rate slot: the next slice flushed keeps it (one handler call's), the slices after take none", () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 2, maxWaitMs: 60_000 });
    b.add(j, 'k', at(0, 1));
    b.add(j, 'k', at(0, 2));
    const [batch] = b.takeDue(0, never);
    expect(batch!.rateSlotAt).toBeUndefined();
    b.add(j, 'k', at(5, 3));
    b.add(j, 'k', at(5, 4));
    b.putBack(batch!, 100, 130);
    const due = b.takeDue(100, never);
    expect(due.map((d) => [d.items.map((i) => i.n), d.rateSlotAt])).toEqual([
      [[1, 2], 130],
      [[3, 4], undefined],
    ]);
  });

  it('remove: takes out the items picked (lost leases), wherever they are', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 10, maxWaitMs: 60_000 });
    const lost = at(0, 2);
    lost.lost = true;
    b.add(j, 'a', at(0, 1));
    b.add(j, 'a', lost);
    b.add(j, 'b', { ...lost, n: 3 });
    expect(b.remove((i) => i.lost === true).map((i) => i.n)).toEqual([2, 3]);
    expect(b.held).toBe(1);
    expect(b.batches).toBe(1);
  });

  it('takeAll: every batch, in slices of maxSize (shutdown)', () => {
    const b = new BatchBuffer<Item>();
    const j = job({ maxSize: 2, maxWaitMs: 60_000 });
    for (let i = 0; i < 5; i++) b.add(j, 'k', at(0, i));
    b.add(j, 'other', at(0, 9));
    expect(sizes(b.takeAll())).toEqual([2, 2, 1, 1]);
    expect(b.held).toBe(0);
  });
});

describe('defineBatchJob', () => {
  it('defaults minSize to maxSize and the key to the job name', () => {
    const j = job({ maxSize: 50, maxWaitMs: 1_000 });
    expect(j.minSize).toBe(50);
    expect(j.key({})).toBe('index');
    expect(j.exclusive).toBe(false);
  });

  it('names the field and the rule of a bad definition', () => {
    const bad = (o: object) => () =>
      defineBatchJob({ name: 'x', args: z.object({}), handle: () => undefined, maxSize: 10, maxWaitMs: 0, ...o });
    expect(bad({ minSize: 11 })).toThrow(ValidationError);
    expect(bad({ minSize: 11 })).toThrow(/batchJob\.minSize: must not be above maxSize/);
    expect(bad({ maxSize: 20_000 })).toThrow(/batchJob\.maxSize: must be at most 10000/);
    expect(bad({ maxWaitMs: -1 })).toThrow(/batchJob\.maxWaitMs/);
    expect(bad({ key: 'user' })).toThrow(/batchJob\.key: must be a function/);
  });
});
