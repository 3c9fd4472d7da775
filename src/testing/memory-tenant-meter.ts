import { tenantMeterOn } from '../fleet/tenant-meter.js';
import type { TenantMeter, TenantReport } from '../ports/tenant-meter.js';
import { OnMemoryStore } from './memory-key-values.js';

/**
 * The tenant meter in memory, for tests that run workers and a dashboard in one process without
 * memcached: memcached's protocol (fleet/tenant-meter.ts) on a MemoryKeyValues, passing the same
 * contract (test/contracts/tenant-meter-port.test.ts). `down = true` makes it answer as an
 * unreachable memcached does.
 */
export class MemoryTenantMeter extends OnMemoryStore implements TenantMeter {
  readonly #meter = tenantMeterOn(this.store, (name) => name);

  report(queueUrl: string, report: TenantReport): Promise<void> {
    return this.#meter.report(queueUrl, report);
  }

  read(queueUrl: string, sinceMs: number): Promise<TenantReport[] | undefined> {
    return this.#meter.read(queueUrl, sinceMs);
  }
}
