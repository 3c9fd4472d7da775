import { z } from 'zod';

/**
 * A fleet-wide limit on how often a job starts (defineJob's `rateLimit`), for work that calls
 * something with a rate limit of its own. Starts sit on a grid spaced 1/perSecond apart, shared by
 * every worker through one counter per window of the grid (memcached `incr`): each start takes the
 * next free slot, now or ahead, and waits for it in the worker that received it.
 *
 *   a window holds `perWindow` slots: max(burst, perSecond/10), so about a tenth of a second
 *   slot n (1-based) of window k is due at k·windowMs + (n-1)·slotMs
 *   a start looks from the slot `burst - 1` slots back: in its window, the counter is created
 *   (incr with an initial value) at that slot, so the slots of a quiet spell are skipped at once,
 *   by whoever asks first, with no read-modify-write; past perWindow it goes on to a later window
 *
 * So in any T seconds at most perSecond·(T + LATE_MS/1000) + perWindow + burst jobs start,
 * fleet-wide, and a steady backlog starts at perSecond.
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

/** A job waits for its slot only while that ends this long before SQS's 12-hour hold of its message does. */
export const HOLD_MARGIN_MS = 10 * 60_000;

/** The grid of a rate: slots `slotMs` apart, counted `perWindow` to a window of `windowMs`. */
interface RateGrid {
  readonly slotMs: number;
  readonly perWindow: number;
  readonly windowMs: number;
}

export function gridOf(limit: Pick<RateLimit, 'perSecond' | 'burst'>): RateGrid {
  const perWindow = Math.max(1, limit.burst, Math.ceil(limit.perSecond / 10));
  const slotMs = 1000 / limit.perSecond;
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
const MAX_WINDOWS = 16;

/**
 * Take the next free slot of a rate, counting with `incr(window, initial)`: adds 1 to window
 * `window`'s counter, or creates it at `initial` (which is then the count), and answers the new
 * count. Both the memcached and the in-memory rate limits use it, so they take slots alike.
 */
export async function reserveSlot(
  limit: RateLimit,
  now: number,
  incr: (window: number, initial: number, grid: RateGrid) => Promise<number>,
): Promise<RateSlot> {
  const g = gridOf(limit);
  // The earliest slot it may take: `burst - 1` slots back, so a burst can start together.
  const from = now - (limit.burst - 1) * g.slotMs;
  let k = Math.floor(from / g.windowMs);
  // In that window, slots before `from` are past: a counter made now starts after them.
  const skip = Math.min(g.perWindow, Math.max(0, Math.ceil((from - k * g.windowMs) / g.slotMs)));
  for (let looked = 0; looked < MAX_WINDOWS; looked++) {
    const n = await incr(k, looked === 0 ? skip + 1 : 1, g);
    if (n <= g.perWindow) return { at: Math.max(now, dueAt(g, k, n)), reserved: true };
    // Window k is full: those counted past its end take the next windows in turn, perWindow to
    // each; so does this one. (Every window it jumps over gets perWindow askers this way.)
    k += 1 + Math.floor((n - g.perWindow - 1) / g.perWindow);
  }
  return { at: Math.max(now, k * g.windowMs), reserved: false };
}

/** Whether a start reserved for `at` is still to be had at `now` (it may be ahead still). */
export const slotKept = (at: number, now: number): boolean => now - at <= LATE_MS;
