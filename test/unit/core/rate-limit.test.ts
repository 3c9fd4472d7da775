import { describe, expect, it } from 'vitest';
import { gridOf, type RateLimit, rateLimitOf, reserveSlot } from '../../../src/core/rate-limit.js';
import { defineJob } from '../../../src/core/job.js';
import { z } from 'zod';
import { mostIn } from '../../helpers/starts.js';

/** Window counters as memcached's incr keeps them: created at `initial`, else one more. */
function counters() {
  const counts = new Map<number, number>();
  return async (window: number, initial: number) => {
    await Promise.resolve(); // answered later, as a server would: asks made together interleave
    const n = counts.has(window) ? counts.get(window)! + 1 : initial;
    counts.set(window, n);
    return n;
  };
}

const limit = (perSecond: number, burst = 1): RateLimit => rateLimitOf({ perSecond, burst });
/** A window's start for every rate used here. */
const T0 = 1_700_000_000_000;

/** Ask at each of `times` in turn (or, `together`, all at once); one not reserved asks again when told, as the worker does. */
async function reserveMany(l: RateLimit, times: readonly number[], together = false) {
  const incr = counters();
  const one = async (now: number) => {
    let slot = await reserveSlot(l, now, incr);
    while (!slot.reserved) slot = await reserveSlot(l, slot.at, incr);
    return slot.at;
  };
  if (together) return Promise.all(times.map(one));
  const out: number[] = [];
  for (const now of times) out.push(await one(now));
  return out;
}

describe('the rate grid: where starts go', () => {
  it('gives many asking one after another consecutive slots 1/perSecond apart, across window ends', async () => {
    const at = await reserveMany(limit(50), Array(120).fill(T0));
    expect(at).toEqual(Array.from({ length: 120 }, (_, i) => T0 + i * 20));
  });

  it('gives many asking at once the same: a receive of 10 does not push its own jobs seconds ahead', async () => {
    const now = T0 + 500; // a quiet spell: half the second unused
    const at = (await reserveMany(limit(50), Array(10).fill(now), true)).sort((a, b) => a - b);
    expect(at).toEqual(Array.from({ length: 10 }, (_, i) => now + i * 20));
  });

  it('keeps fractional rates on their grid (0.5/s: one start every 2 s)', async () => {
    expect(gridOf(limit(0.5))).toEqual({ slotMs: 2_000, perWindow: 1, windowMs: 2_000 });
    const at = await reserveMany(limit(0.5), Array(4).fill(T0));
    expect(at).toEqual([T0, T0 + 2_000, T0 + 4_000, T0 + 6_000]);
    expect(gridOf(limit(50))).toEqual({ slotMs: 20, perWindow: 5, windowMs: 100 }); // windows of about 0.1 s
  });

  it('after a quiet spell, starts at the next slot and then one per slot (burst 1), also at slow rates', async () => {
    // Never on a slot already past: one started on it a moment ago, for all this worker knows.
    const now = T0 + 510; // mid-slot
    expect(await reserveMany(limit(50), Array(4).fill(now))).toEqual([T0 + 520, T0 + 540, T0 + 560, T0 + 580]);
    const slow = T0 + 900;
    expect(await reserveMany(limit(1), Array(3).fill(slow))).toEqual([T0 + 1_000, T0 + 2_000, T0 + 3_000]);
  });

  it('with burst 5, lets 5 start together after a quiet spell, then one per slot, at any rate', async () => {
    const now = T0 + 500;
    expect(await reserveMany(limit(50, 5), Array(7).fill(now), true)).toEqual([now, now, now, now, now, now + 20, now + 40]);
    const slow = T0 + 5_000; // on a slot: the 5 slots back to T0 + 1 s are free
    expect(await reserveMany(limit(1, 5), Array(6).fill(slow), true)).toEqual([slow, slow, slow, slow, slow, T0 + 6_000]);
  });

  it('never starts more than perSecond × T + perWindow + burst in any T, however the asks arrive', async () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (const [perSecond, burst] of [
      [50, 1],
      [50, 10],
      [7, 3],
      [0.8, 1],
      [1_000, 1],
    ] as const) {
      // Groups of asks made together at random moments over ~20 s, some quiet, some far over the rate.
      const groups: number[][] = [];
      let t = T0 + 137;
      for (let asks = 0; asks < 600; ) {
        t += random() < 0.2 ? random() * 3_000 : random() * 10;
        const n = 1 + Math.floor(random() * 8);
        groups.push(Array(n).fill(Math.round(t)));
        asks += n;
      }
      const l = limit(perSecond, burst);
      const incr = counters();
      const at: number[] = [];
      for (const group of groups) {
        const got = await Promise.all(
          group.map(async (now) => {
            let slot = await reserveSlot(l, now, incr);
            while (!slot.reserved) slot = await reserveSlot(l, slot.at, incr);
            expect(slot.at).toBeGreaterThanOrEqual(now); // never before it asked
            return slot.at;
          }),
        );
        at.push(...got);
      }
      expect(new Set(at.map(String)).size).toBeGreaterThan(0);
      const { perWindow } = gridOf(l);
      for (const spanS of [1, 10]) expect(mostIn(at, spanS * 1000)).toBeLessThanOrEqual(Math.ceil(perSecond * spanS) + perWindow + burst);
    }
  });

  it('says when to ask again, having looked 16 windows ahead and found them all full', async () => {
    const full = async () => 1_000; // every window counted far past its slots
    const slot = await reserveSlot(limit(50), T0, full);
    expect(slot.reserved).toBe(false);
    expect(slot.at).toBeGreaterThan(T0);
  });
});

describe('defineJob rateLimit', () => {
  const handle = () => {};
  it('fills in burst 1 and one rate for the job', () => {
    const job = defineJob({ name: 'sync', args: z.object({}), handle, rateLimit: { perSecond: 5 } });
    expect(job.rateLimit).toEqual({ perSecond: 5, burst: 1, perTenant: false });
    expect(defineJob({ name: 'free', args: z.object({}), handle }).rateLimit).toBeUndefined();
  });

  it.each([
    [{ perSecond: 0 }, 'rateLimit.perSecond'],
    [{ perSecond: 5, burst: 0 }, 'rateLimit.burst'],
    [{ perSecond: 5, burst: 1.5 }, 'rateLimit.burst'],
    [{ perSecond: 5, every: 1 }, 'rateLimit'],
  ])('refuses %o, naming %s', (rateLimit, field) => {
    expect(() => defineJob({ name: 'sync', args: z.object({}), handle, rateLimit: rateLimit as never })).toThrow(field);
  });
});
