import { KeyValueLock } from '../fleet/lock.js';
import { allowancesOn } from '../fleet/allowances.js';
import { drainMeterOn } from '../fleet/drain-meter.js';
import { permitsOn } from '../fleet/permits.js';
import { rateLimitsOn } from '../fleet/rate-limits.js';
import { tenantMeterOn } from '../fleet/tenant-meter.js';
import { tickRotaOn } from '../fleet/tick-rota.js';
import { controlNoticesOn } from '../fleet/control-notices.js';
import type { ControlNotices } from '../ports/control-store.js';
import type { Allowances } from '../ports/allowances.js';
import type { DrainMeter } from '../ports/drain-meter.js';
import type { Permits } from '../ports/permits.js';
import type { RateLimits } from '../ports/rate-limits.js';
import type { TenantMeter } from '../ports/tenant-meter.js';
import type { TickRota } from '../ports/tick-rota.js';
import { MemcachedConnection, type MemcachedConnectionOptions } from './memcached-connection.js';
import { brand } from '../core/brand.js';

/**
 * What a MemcachedLock is made with: the servers (`[tls://]host:port[,host:port]`), with a `tls://`
 * list its `tls` settings, the request timeout and the availability callback (MemcachedConnectionOptions),
 * and the key prefix every key it writes starts with.
 */
export interface MemcachedLockOptions extends MemcachedConnectionOptions {
  /** Default `sqsjobs:`: workers, producers and the dashboard must agree on it. */
  readonly keyPrefix?: string;
}

/**
 * JobLock on memcached (the protocol in fleet/lock.ts, through a MemcachedConnection), and the
 * fleet-wide counters on the same memcached (fleet/).
 */
export class MemcachedLock extends KeyValueLock {
  static {
    brand(MemcachedLock, 'sqs-jobs/MemcachedLock'); // instanceof holds for another copy's MemcachedLock too
  }
  readonly #m: MemcachedConnection;

  /** Fleet-wide permits on the same memcached (tenant caps, exclusive batch keys): see Permits. */
  readonly permits: Permits;

  /** Fleet-wide starts per second per job (a job's rateLimit), on the same memcached: see RateLimits. */
  readonly rates: RateLimits;

  /** Spillover allowances shared by every producer, on the same memcached: see Allowances. */
  readonly allowances: Allowances;

  /** How many messages the workers have deleted per queue, on the same memcached (admission reads it): see DrainMeter. */
  readonly drains: DrainMeter;

  /** What the workers saw of each tenant, per queue, on the same memcached (the dashboard's tenants page reads it): see TenantMeter. */
  readonly tenants: TenantMeter;

  /** Which worker reads each shard of the schedules' due index each second, on the same memcached: see TickRota. */
  readonly ticks: TickRota;

  /** The version of the control state (pauses) last written, on the same memcached: see ControlNotices. */
  readonly controls: ControlNotices;

  constructor(options: MemcachedLockOptions) {
    const m = new MemcachedConnection(options);
    const prefix = options.keyPrefix ?? 'sqsjobs:';
    super(m, prefix);
    this.#m = m;
    this.permits = permitsOn(m, (key, index) => `${prefix}slot/${key}/${index}`);
    this.rates = rateLimitsOn(m, (name) => prefix + name);
    this.allowances = allowancesOn(m, (name) => prefix + name);
    this.drains = drainMeterOn(m, (name) => prefix + name);
    this.tenants = tenantMeterOn(m, (name) => prefix + name);
    this.ticks = tickRotaOn(m, (name) => prefix + name);
    this.controls = controlNoticesOn(m, (name) => prefix + name);
  }

  /** Closes the memcached connection, which `permits`, `rates`, `allowances`, `drains`, `tenants`, `ticks` and `controls` share. */
  override close(): void {
    this.#m.close();
  }
}
