import { TENANT_REPORTS_KEPT_MINUTES, type TenantMeter, type TenantReport } from '../ports/tenant-meter.js';

/**
 * The tenant meter in memory, for tests that run workers and a dashboard in one process without
 * memcached. It passes the same contract as MemcachedLock's on a real memcached
 * (test/contracts/tenant-meter-port.test.ts). `down = true` makes it answer as an unreachable
 * memcached does.
 */
export class MemoryTenantMeter implements TenantMeter {
  readonly #reports = new Map<string, TenantReport[]>();
  down = false;

  async report(queueUrl: string, report: TenantReport): Promise<void> {
    if (this.down) return;
    const kept = (this.#reports.get(queueUrl) ?? []).filter((r) => r.at >= Date.now() - (TENANT_REPORTS_KEPT_MINUTES + 5) * 60_000);
    // A copy: the reader gets what was reported, not an object the worker may change later.
    kept.push(structuredClone(report));
    this.#reports.set(queueUrl, kept);
  }

  async read(queueUrl: string, sinceMs: number): Promise<TenantReport[] | undefined> {
    if (this.down) return undefined;
    return (this.#reports.get(queueUrl) ?? []).filter((r) => r.at >= sinceMs).sort((a, b) => a.at - b.at);
  }
}
