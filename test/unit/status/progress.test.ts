import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ProgressUpdate } from '../../../src/ports/status-store.js';
import { ProgressReporter } from '../../../src/status/progress.js';

describe('ProgressReporter: at most one write per interval, the latest values win', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function reporter(intervalMs = 1_000) {
    const writes: ProgressUpdate[] = [];
    const r = new ProgressReporter(
      async (u) => void writes.push(u),
      intervalMs,
      () => {},
    );
    return { r, writes };
  }

  it('writes the first call at once, then coalesces a tight loop into one write per interval', async () => {
    const { r, writes } = reporter();
    for (let i = 1; i <= 10_000; i++) r.fn(i, 10_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(writes).toEqual([{ done: 1, total: 10_000 }]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(writes).toEqual([
      { done: 1, total: 10_000 },
      { done: 10_000, total: 10_000 },
    ]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(writes).toHaveLength(2); // nothing new, nothing written
  });

  it('sums adds, folds an add into an absolute value, and sends data', async () => {
    const { r, writes } = reporter();
    r.fn.add(1);
    await vi.advanceTimersByTimeAsync(0);
    r.fn.add(2);
    r.fn.add(3);
    r.fn.data({ step: 'parse' });
    await vi.advanceTimersByTimeAsync(1_000);
    r.fn(40);
    r.fn.add(2);
    await r.flush();
    expect(writes).toEqual([{ add: 1 }, { add: 5, data: { step: 'parse' } }, { done: 42 }]);
  });

  it('flush() writes what is pending at once, and nothing when nothing is', async () => {
    const { r, writes } = reporter(60_000);
    await r.flush();
    expect(writes).toEqual([]);
    r.fn(1);
    await vi.advanceTimersByTimeAsync(0);
    r.fn(2);
    await r.flush();
    expect(writes).toEqual([{ done: 1 }, { done: 2 }]);
  });

  it('a failed write is reported and dropped; later values still go', async () => {
    const errors: unknown[] = [];
    let fail = true;
    const writes: ProgressUpdate[] = [];
    const r = new ProgressReporter(
      async (u) => {
        if (fail) throw new Error('store down');
        writes.push(u);
      },
      1_000,
      (e) => errors.push(e),
    );
    r.fn(1);
    await vi.advanceTimersByTimeAsync(0);
    fail = false;
    r.fn(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(1);
    expect(writes).toEqual([{ done: 2 }]);
  });
});

describe('ProgressReporter.flush', () => {
  it('waits for a write in flight, then writes what came during it, before it resolves', async () => {
    const writes: ProgressUpdate[] = [];
    let release = () => {};
    const r = new ProgressReporter(
      async (u) => {
        writes.push(u);
        if (writes.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
      10,
      () => {},
    );
    r.fn(1);
    await new Promise((resolve) => setImmediate(resolve));
    r.fn(2); // while the first write is slow
    const flushed = r.flush();
    setTimeout(() => release(), 50);
    await flushed;
    expect(writes).toEqual([{ done: 1 }, { done: 2 }]);
  });
});
