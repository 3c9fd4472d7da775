import { randomUUID } from 'node:crypto';
import type { JobInfo, WorkerEvents } from '../core/job-events.js';
import { addTenantTotals, type MutableTenantTotals, noTenantTotals as zero } from '../core/tenant-totals.js';
import type { TenantFigures, TenantMeter, TenantReport } from '../ports/tenant-meter.js';

/** A report names at most this many tenants (capped ones running or deferred, then those that waited longest); the rest are summed. */
export const TENANTS_PER_REPORT = 20;

interface EventSource {
  on<K extends keyof WorkerEvents & string>(event: K, listener: (...args: WorkerEvents[K]) => void): unknown;
}

type Counts = MutableTenantTotals;

interface TenantTallyOptions {
  readonly flushMs: number;
  /** The worker's tenant caps (tenantCaps): a report says each tenant's cap. */
  readonly caps: Readonly<Record<string, number>>;
}

/**
 * Counts what this worker sees of each tenant (jobs that name one): starts and their waits, cap
 * deferrals, failures, dead letters; with the tenants' jobs running at each flush. Once per
 * `flushMs`, while there is anything to say, it reports each queue's figures to the tenant meter
 * (the dashboard's tenants page): one report per queue per flush, whatever the rate. A job
 * without a tenant costs one comparison per event.
 */
export class TenantTally {
  readonly #meter: TenantMeter;
  readonly #o: TenantTallyOptions;
  readonly #worker = randomUUID().slice(0, 12);
  /** queue URL -> tenant -> counts since the last flush. */
  readonly #counts = new Map<string, Map<string, Counts>>();
  #since = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #running: () => Iterable<JobInfo> = () => [];
  /** The queues whose last report had jobs running: the next says so even when nothing runs any more. */
  #reportedRunning = new Set<string>();

  constructor(meter: TenantMeter, options: TenantTallyOptions) {
    this.#meter = meter;
    this.#o = options;
  }

  /** Count `source`'s events; `running` says which jobs' handlers run now. */
  attach(source: EventSource, running: () => Iterable<JobInfo>): void {
    this.#running = running;
    source.on('job:start', (e) => {
      if (e.tenant === undefined) return;
      const c = this.#of(e);
      c.started++;
      c.waitMsTotal += e.waitMs;
      if (e.waitMs > c.waitMsMax) c.waitMsMax = e.waitMs;
    });
    // Over its cap: re-sent (deferred), or kept here to wait for a permit. (A job at its own rate limit is not its tenant's doing.)
    source.on('job:waiting', (e) => {
      if (e.tenant !== undefined && e.limit === 'tenant-cap') this.#of(e).deferred++;
    });
    source.on('job:deferred', (e) => {
      if (e.tenant !== undefined && e.limit === 'tenant-cap') this.#of(e).deferred++;
    });
    source.on('job:failed', (e) => {
      if (e.tenant !== undefined) this.#of(e).failed++;
    });
    source.on('job:dead-lettered', (e) => {
      if (e.tenant !== undefined) this.#of(e).deadLettered++;
    });
  }

  /** Report what was counted since the last flush, with the tenants running now (and wait for the reports before it). */
  flush(): Promise<void> {
    const now = Date.now();
    const counts = new Map([...this.#counts].map(([url, tenants]) => [url, new Map(tenants)]));
    this.#counts.clear();
    for (const info of this.#running()) {
      if (info.tenant === undefined) continue;
      const byTenant = counts.get(info.queueUrl) ?? new Map<string, Counts>();
      counts.set(info.queueUrl, byTenant);
      const c = byTenant.get(info.tenant) ?? zero();
      byTenant.set(info.tenant, c);
      c.running++;
    }
    // A queue whose jobs ran at the last report gets a report now, if only to say none runs.
    for (const url of this.#reportedRunning) if (!counts.has(url)) counts.set(url, new Map());
    const reports = [...counts].map(([url, byTenant]) => [url, this.#reportOf(byTenant, now)] as const);
    this.#reportedRunning = new Set(
      reports.filter(([, r]) => r.others.running > 0 || r.tenants.some((t) => t.running > 0)).map(([url]) => url),
    );
    this.#since = now;
    // A meter should not reject; one that does loses that report (a gap in the page), nothing more.
    const send = () => Promise.all(reports.map(([url, r]) => this.#meter.report(url, r).catch(() => {})));
    this.#flushing = this.#flushing.then(send).then(() => {});
    return this.#flushing;
  }

  /** Stop the timer and report what is left (shutdown, before the memcached client closes). */
  close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    return this.flush();
  }

  #of(e: JobInfo): Counts {
    // The timer starts with the first tenant seen; it then runs (unref'd) while the worker does,
    // so a tenant's long-running jobs keep being reported.
    if (this.#timer === undefined) {
      this.#since = Date.now();
      this.#timer = setInterval(() => void this.flush(), this.#o.flushMs);
      this.#timer.unref();
    }
    let byTenant = this.#counts.get(e.queueUrl);
    if (byTenant === undefined) {
      byTenant = new Map();
      this.#counts.set(e.queueUrl, byTenant);
    }
    let c = byTenant.get(e.tenant!);
    if (c === undefined) {
      c = zero();
      byTenant.set(e.tenant!, c);
    }
    return c;
  }

  /**
   * The tenants with a cap that this worker runs or deferred first (the fleet-wide cap may be full;
   * the page sums running across workers), then those that waited longest; the rest summed.
   */
  #reportOf(byTenant: ReadonlyMap<string, Counts>, now: number): TenantReport {
    const caps = this.#o.caps;
    const capOf = (tenant: string) => (Object.hasOwn(caps, tenant) ? caps[tenant] : undefined);
    const figures: TenantFigures[] = [...byTenant].map(([tenant, c]) => {
      const cap = capOf(tenant);
      return cap === undefined ? { tenant, ...c } : { tenant, cap, ...c };
    });
    const capped = (f: TenantFigures) => (f.cap !== undefined && (f.running > 0 || f.deferred > 0) ? 1 : 0);
    figures.sort((a, b) => capped(b) - capped(a) || b.waitMsMax - a.waitMsMax || b.started - a.started);
    const others = { ...zero(), tenants: 0 };
    for (const f of figures.slice(TENANTS_PER_REPORT)) {
      others.tenants++;
      addTenantTotals(others, f);
    }
    return { worker: this.#worker, at: now, periodMs: now - this.#since, tenants: figures.slice(0, TENANTS_PER_REPORT), others };
  }
}
