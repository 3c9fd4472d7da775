import { addTenantTotals, type MutableTenantTotals, noTenantTotals as zero } from '../core/tenant-totals.js';
import type { Point } from '../ports/metrics-reader.js';
import type { TenantReport, TenantTotals } from '../ports/tenant-meter.js';

/** A worker's report is current (its `running` counts now) for this long: two flushes and some slack. */
const CURRENT_MS = 35_000;

/** One tenant over the window, summed over every worker and every queue of a family (queue, spillover, lanes). */
export interface TenantSummary extends TenantTotals {
  readonly tenant: string;
  /** The queues (names) it was seen on. */
  readonly queues: readonly string[];
  /** Its cap, as the workers last said. */
  readonly cap: number | undefined;
  /** Handlers started per minute over the window. */
  readonly startedPerMinute: readonly Point[];
}

export interface TenantsView {
  readonly tenants: readonly TenantSummary[];
  /** The tenants the reports did not name (they name the 20 that waited longest), summed. */
  readonly others: TenantTotals & { readonly mostPerReport: number };
  /** Workers whose last report is current. */
  readonly workers: number;
  readonly from: number;
  readonly to: number;
}

/**
 * The reports of a family of queues (`byQueue`: queue name -> its reports, oldest first) summed per
 * tenant over [from, to]: counts over the window, the jobs running now from each worker's last
 * report (if current), caps as last said.
 */
export function summarizeTenants(byQueue: ReadonlyMap<string, readonly TenantReport[]>, from: number, to: number): TenantsView {
  const rows = new Map<string, MutableTenantTotals & { queues: Set<string>; cap: number | undefined; perMinute: Map<number, number> }>();
  const others = { ...zero(), mostPerReport: 0 };
  const workers = new Set<string>();
  for (const [queue, all] of byQueue) {
    // Reports made after `to` (during the read, or by a worker whose clock runs ahead) wait for the next look.
    const reports = all.filter((r) => r.at >= from && r.at <= to);
    const last = new Map<string, TenantReport>();
    for (const r of reports) last.set(r.worker, r);
    for (const r of reports) {
      // Running is a count at the report's time: only each worker's last report, and only if current.
      const current = last.get(r.worker) === r && to - r.at <= CURRENT_MS;
      if (current) workers.add(r.worker);
      const minute = Math.floor(r.at / 60_000) * 60_000;
      for (const t of r.tenants) {
        let row = rows.get(t.tenant);
        if (row === undefined) {
          row = { ...zero(), queues: new Set(), cap: undefined, perMinute: new Map() };
          rows.set(t.tenant, row);
        }
        addTenantTotals(row, t, current);
        row.queues.add(queue);
        if (t.cap !== undefined) row.cap = t.cap;
        if (t.started > 0) row.perMinute.set(minute, (row.perMinute.get(minute) ?? 0) + t.started);
      }
      addTenantTotals(others, r.others, current);
      others.mostPerReport = Math.max(others.mostPerReport, r.others.tenants);
    }
  }
  const tenants = [...rows].map(
    ([tenant, { queues, cap, perMinute, ...t }]): TenantSummary => ({
      tenant,
      ...t,
      queues: [...queues].sort(),
      cap,
      startedPerMinute: [...perMinute].sort(([a], [b]) => a - b).map(([at, value]) => ({ at, value })),
    }),
  );
  return { tenants, others, workers: workers.size, from, to };
}

/** How the tenants table can be ordered (the `sort` query parameter); the first is the default. */
export const TENANT_ORDERS = {
  wait: (t: TenantSummary) => t.waitMsMax,
  'mean-wait': (t: TenantSummary) => (t.started === 0 ? 0 : t.waitMsTotal / t.started),
  started: (t: TenantSummary) => t.started,
  deferred: (t: TenantSummary) => t.deferred,
  running: (t: TenantSummary) => t.running,
  failed: (t: TenantSummary) => t.failed + t.deadLettered,
} as const;
export type TenantOrder = keyof typeof TENANT_ORDERS;

export function isTenantOrder(value: string | null): value is TenantOrder {
  return value !== null && Object.hasOwn(TENANT_ORDERS, value);
}

/** A tenant is at its cap when the jobs it runs now reach the cap. */
export function atCap(t: TenantSummary): boolean {
  return t.cap !== undefined && t.running >= t.cap;
}
