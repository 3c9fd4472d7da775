import { z } from 'zod';

/**
 * A fleet-wide limit on how often a job starts (defineJob's `rateLimit`), for work that calls
 * something with a rate limit of its own. Starts sit on a grid spaced 1/perSecond apart, shared by
 * every worker through one counter per window of the grid (memcached `incr`): each start takes the
 * next free slot, now or ahead, and waits for it in the worker that received it.
 *
 *   window k holds `perWindow` slots; slot n (1-based) is due at k·windowMs + (n-1)·slotMs
 *   a start takes slot n = incr(window k); past perWindow, it goes on to a later window
 *   slots left unused in a quiet spell are skipped beyond `burst`, so quiet does not add up to a rush
 *
 * So in any T seconds at most perSecond·(T + LATE_MS/1000) + burst jobs start, fleet-wide.
 */
export interface RateLimit {
  /** Starts per second across every worker; fractional for slower ones (0.5: one every 2 s). */
  readonly perSecond: number;
  /** How many may start together after a quiet spell (default 1: every start waits for its turn). */
  readonly burst: number;
  /** Each tenant gets the rate to itself (default false: one rate for the job, whatever the tenant). */
  readonly perTenant: boolean;
}

export const rateLimitSchema = z
  .object({
    perSecond: z.number().min(0.001, 'must be at least 0.001 (one start in about 17 minutes)').max(100_000),
    burst: z.number().int().min(1).max(100_000).optional(),
    perTenant: z.boolean().optional(),
  })
  .strict();

export type RateLimitSpec = z.input<typeof rateLimitSchema>;

export function rateLimitOf(spec: z.output<typeof rateLimitSchema>): RateLimit {
  return Object.freeze({ perSecond: spec.perSecond, burst: spec.burst ?? 1, perTenant: spec.perTenant ?? false });
}

/** How late after its slot a job that waited for it may still start on it (timers and a busy worker are not exact). */
export const LATE_MS = 100;

/** The grid of a rate: slots `slotMs` apart, counted `perWindow` to a window of `windowMs`. */
export interface RateGrid {
  readonly slotMs: number;
  readonly perWindow: number;
  readonly windowMs: number;
}

export function gridOf(perSecond: number): RateGrid {
  const perWindow = Math.max(1, Math.ceil(perSecond));
  const slotMs = 1000 / perSecond;
  return { slotMs, perWindow, windowMs: perWindow * slotMs };
}

/** When slot `n` (1-based) of window `k` is due, in ms since the epoch. */
export const dueAt = (g: RateGrid, k: number, n: number): number => k * g.windowMs + (n - 1) * g.slotMs;

/** A start as the counters gave it: its slot's time, or, not `reserved`, when to ask again (every window looked at was full). */
export interface RateSlot {
  readonly at: number;
  readonly reserved: boolean;
}

/** Windows one reservation looks at before it settles for asking again later. */
const MAX_WINDOWS = 8;

/**
 * Take the next free slot of a rate, counting with `incr(window, by)` (adds `by` to window
 * `window`'s counter, created at 0, and answers the new count). Both the memcached and the in-memory
 * rate limits use it, so they take slots alike.
 */
export async function reserveSlot(
  limit: RateLimit,
  now: number,
  incr: (window: number, by: number, grid: RateGrid) => Promise<number>,
): Promise<RateSlot> {
  const g = gridOf(limit.perSecond);
  let k = Math.floor(now / g.windowMs);
  for (let looked = 0; looked < MAX_WINDOWS; looked++) {
    let n = await incr(k, 1, g);
    if (n <= g.perWindow) {
      // Slots of a quiet spell, past the burst allowance: skipped (a concurrent skip may skip a few more).
      const behind = Math.floor((now - dueAt(g, k, n)) / g.slotMs) - (limit.burst - 1);
      if (behind > 0) n = await incr(k, behind, g);
      if (n <= g.perWindow) return { at: Math.max(now, dueAt(g, k, n)), reserved: true };
    }
    // Window k is full: those counted past its end take the next windows in turn, perWindow to each;
    // so does this one. (Every window it jumps over gets perWindow askers this way: no gap is left.)
    k += 1 + Math.floor((n - g.perWindow - 1) / g.perWindow);
  }
  return { at: Math.max(now, k * g.windowMs), reserved: false };
}

/** Whether a start reserved for `at` is still to be had at `now` (it may be ahead still). */
export const slotKept = (at: number, now: number): boolean => now - at <= LATE_MS;
