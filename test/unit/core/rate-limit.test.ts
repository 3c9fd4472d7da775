import { describe, expect, it } from 'vitest';
import { gridOf, type RateLimit, rateLimitOf, reserveSlot } from '../../../src/core/rate-limit.js';
import { defineJob } from '../../../src/core/job.js';
import { z } from 'zod';

/** A window counter as memcached's incr keeps it (created at 0), for one key. */
function counters() {
  const counts = new Map<number, number>();
  return async (window: number, by: number) => {
    const n = (counts.get(window) ?? 0) + by;
    counts.set(window, n);
    return n;
  };
}

const limit = (perSecond: number, burst = 1): RateLimit => rateLimitOf({ perSecond, burst });
/** A window's start for 50/s: windows are 1 s. */
const T0 = 1_700_000_000_000;

async function reserveMany(l: RateLimit, times: readonly number[]) {
  const incr = counters();
  const out: number[] = [];
  for (const now of times) {
    let slot = await reserveSlot(l, now, incr);
    // Every window it looked at was full: it waits until then and asks again, as the worker does.
    while (!slot.reserved) slot = await reserveSlot(l, slot.at, incr);
    out.push(slot.at);
  }
  return out;
}

/** Most starts in any `spanMs` (starts at the slot times). */
function mostIn(starts: readonly number[], spanMs: number): number {
  const s = [...starts].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i]! - s[j]! >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

describe('the rate grid: where starts go', () => {
  it('gives many asking at once consecutive slots 1/perSecond apart, across window ends', async () => {
    const at = await reserveMany(limit(50), Array(120).fill(T0));
    expect(at).toEqual(Array.from({ length: 120 }, (_, i) => T0 + i * 20));
  });

  it('keeps fractional rates on their grid (0.5/s: one start every 2 s)', async () => {
    expect(gridOf(0.5)).toEqual({ slotMs: 2_000, perWindow: 1, windowMs: 2_000 });
    const at = await reserveMany(limit(0.5), Array(4).fill(T0));
    expect(at).toEqual([T0, T0 + 2_000, T0 + 4_000, T0 + 6_000]);
    expect(gridOf(2.5)).toEqual({ slotMs: 400, perWindow: 3, windowMs: 1_200 });
  });

  it('after a quiet spell, starts now and then one per slot: the unused slots do not add up to a rush (burst 1)', async () => {
    const now = T0 + 500; // halfway through the window: 25 slots went unused
    const at = await reserveMany(limit(50), Array(4).fill(now));
    expect(at).toEqual([now, now + 20, now + 40, now + 60]);
  });

  it('with burst 5, lets 5 start together after a quiet spell, then one per slot', async () => {
    const now = T0 + 500;
    const at = await reserveMany(limit(50, 5), Array(7).fill(now));
    expect(at).toEqual([now, now, now, now, now, now + 20, now + 40]);
  });

  it('never starts more than perSecond × T + burst in any T, however the asks arrive', async () => {
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
    ] as const) {
      // Bursts of asks at random moments over ~20 s, some quiet, some far over the rate.
      const times: number[] = [];
      let t = T0 + 137;
      while (times.length < 600) {
        t += random() < 0.2 ? random() * 3_000 : random() * 10;
        const n = 1 + Math.floor(random() * 8);
        for (let i = 0; i < n; i++) times.push(Math.round(t));
      }
      const at = await reserveMany(limit(perSecond, burst), times);
      for (const [i, start] of at.entries()) expect(start).toBeGreaterThanOrEqual(times[i]!); // never before it asked
      for (const spanS of [1, 10]) expect(mostIn(at, spanS * 1000)).toBeLessThanOrEqual(Math.ceil(perSecond * spanS) + burst);
    }
  });

  it('says when to ask again, having looked 8 windows ahead and found them all full', async () => {
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
