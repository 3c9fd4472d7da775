import type { TenantTotals } from '../core/tenant-totals.js';

export type { TenantTotals };

/**
 * The tenant meter: what each worker saw of each tenant (jobs started, how long they waited, caps
 * and deferrals, jobs running now), reported per queue every few seconds to where a dashboard can
 * read it. Tenants are many and CloudWatch bills each dimension value as a metric, so these figures
 * do not go there. A report is bounded: the tenants that waited longest, the rest summed.
 */
export interface TenantMeter {
  /** Keep one worker's report on `queueUrl`. Never rejects: a lost report is a gap in the page, nothing more. */
  report(queueUrl: string, report: TenantReport): Promise<void>;
  /**
   * The reports on `queueUrl` made at or after `sinceMs` (epoch ms), oldest first; undefined when
   * they cannot be read. Reports are kept for at least `TENANT_REPORTS_KEPT_MINUTES`.
   */
  read(queueUrl: string, sinceMs: number): Promise<TenantReport[] | undefined>;
}

/** How long a meter keeps reports (a dashboard's tenant figures look back this far at most). */
export const TENANT_REPORTS_KEPT_MINUTES = 60;

/** One worker's figures for one queue since its last report. */
export interface TenantReport {
  /** The worker that made it (random per worker process). */
  readonly worker: string;
  /** When it was made (epoch ms); it covers the `periodMs` before. */
  readonly at: number;
  readonly periodMs: number;
  /** At most 20 tenants: those with a cap that the worker runs or deferred, then those that waited longest. */
  readonly tenants: readonly TenantFigures[];
  /** The other tenants seen in the period, summed (`tenants` is how many). */
  readonly others: TenantTotals & { readonly tenants: number };
}

export interface TenantFigures extends TenantTotals {
  readonly tenant: string;
  /** The tenant's cap on this worker (tenantCaps), when it has one. */
  readonly cap?: number;
}
