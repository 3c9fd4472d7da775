/** What a worker counts of one tenant (the tenant meter's figures, src/ports/tenant-meter.ts). */
export interface TenantTotals {
  /** Handlers started. */
  readonly started: number;
  /** Their waits (SentTimestamp to handler start), summed, and the longest, in ms. */
  readonly waitMsTotal: number;
  readonly waitMsMax: number;
  /** Jobs that found the tenant at its cap (tenantCaps): kept waiting in a worker (job:waiting) or re-sent (job:deferred). */
  readonly deferred: number;
  /** Handler failures (retried or not) and jobs sent to the DLQ. */
  readonly failed: number;
  readonly deadLettered: number;
  /** Handlers of the tenant running on this worker when the report was made. */
  readonly running: number;
}

export type MutableTenantTotals = { -readonly [K in keyof TenantTotals]: TenantTotals[K] };

export const noTenantTotals = (): MutableTenantTotals => ({
  started: 0,
  waitMsTotal: 0,
  waitMsMax: 0,
  deferred: 0,
  failed: 0,
  deadLettered: 0,
  running: 0,
});

/** Add `t` to `into`: counts summed, the longest wait kept; `running` too unless told not to (a count at a moment, not over a period). */
export function addTenantTotals(into: MutableTenantTotals, t: TenantTotals, running = true): void {
  into.started += t.started;
  into.waitMsTotal += t.waitMsTotal;
  into.waitMsMax = Math.max(into.waitMsMax, t.waitMsMax);
  into.deferred += t.deferred;
  into.failed += t.failed;
  into.deadLettered += t.deadLettered;
  if (running) into.running += t.running;
}
