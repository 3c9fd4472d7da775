/**
 * A spillover allowance shared by every producer (the producer's `spillover` option, with
 * memcached): `burst` jobs of a key per window of `burst / perSecond` seconds may go to the main
 * queue, the rest spill. One counter per key and window, taken with `incr` by the number of jobs
 * sent: so N producers, or one tenant under many names grouped by `tenantGroup`, share one
 * allowance. A window may let `burst` through at its end and `burst` more at the next one's start.
 */
export interface Allowance {
  readonly perSecond: number;
  readonly burst: number;
}

/** The window `now` falls in: its index (the counter's name) and how long it lasts. */
export function allowanceWindow(a: Allowance, now: number): { readonly index: number; readonly ms: number } {
  const ms = (a.burst / a.perSecond) * 1000;
  return { index: Math.floor(now / ms), ms };
}

/** Of `count` jobs just counted, taking the window's count to `total`: how many were within the allowance. */
export function withinAllowance(a: Allowance, count: number, total: number): number {
  return Math.max(0, Math.min(count, a.burst - (total - count)));
}
