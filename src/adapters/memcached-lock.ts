import { type ClaimingMessage, type ClaimResult, deadLetterCheckOf, type ExtendResult, type JobLock } from '../ports/lock.js';
import { CANCELLED, claimTokenOf, DONE, heldBy, holderOf, LEAVING, leavingValue, runningUnder, runningValue } from '../core/lock-values.js';
import type { Permits } from '../ports/permits.js';
import { MemcachedConnection, type MemcachedConnectionOptions } from './memcached-connection.js';
import { memcachedPermits } from './memcached-permits.js';
import { memcachedRateLimits } from './memcached-rate-limits.js';
import { memcachedAllowances } from './memcached-allowances.js';
import type { Allowances } from '../ports/allowances.js';
import type { RateLimits } from '../ports/rate-limits.js';
import { memcachedDrainMeter } from './memcached-drain-meter.js';
import type { DrainMeter } from '../ports/drain-meter.js';
import type { TenantMeter } from '../ports/tenant-meter.js';
import { memcachedTenantMeter } from './memcached-tenant-meter.js';
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

/** When a release that failed is tried again (each only deletes a lock this token still holds). */
const RELEASE_RETRIES_MS = [1_000, 5_000];

/** JobLock on memcached (through a MemcachedConnection), and the fleet-wide counters on the same memcached. */
export class MemcachedLock implements JobLock {
  static {
    brand(MemcachedLock, 'sqs-jobs/MemcachedLock'); // instanceof holds for another copy's MemcachedLock too
  }
  readonly #m: MemcachedConnection;
  readonly #prefix: string;

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

  constructor(options: MemcachedLockOptions) {
    this.#m = new MemcachedConnection(options);
    const prefix = options.keyPrefix ?? 'sqsjobs:';
    this.#prefix = prefix;
    this.permits = memcachedPermits(this.#m, (key, index) => `${prefix}slot/${key}/${index}`);
    this.rates = memcachedRateLimits(this.#m, (name) => prefix + name);
    this.allowances = memcachedAllowances(this.#m, (name) => prefix + name);
    this.drains = memcachedDrainMeter(this.#m, (name) => prefix + name);
    this.tenants = memcachedTenantMeter(this.#m, (name) => prefix + name);
  }

  /** The memcached key of `jobId`'s lock: the key prefix (`keyPrefix`, default `sqsjobs:`), then the job id. */
  key(jobId: string): string {
    return `${this.#prefix}${jobId}`;
  }

  /** Where a dead-lettered message is remembered; `/` cannot occur in a job id, so no job's key collides. */
  deadLetteredKey(originId: string): string {
    return `${this.#prefix}dlq/${originId}`;
  }

  /** Claims the job id with memcached `add`, reading the key when it exists; see JobLock.claim. */
  async claim(jobId: string, token: string, ttlSeconds: number, message?: ClaimingMessage): Promise<ClaimResult> {
    const key = this.key(jobId);
    try {
      const dead = message === undefined ? undefined : deadLetterCheckOf(message);
      if (dead !== undefined && (await this.#m.call((c) => c.get(this.deadLetteredKey(dead)))) !== null) return this.#m.ok('dead-lettered');
      if (message?.parentId !== undefined) {
        const value = await this.#m.call((c) => c.get(this.key(message.parentId!)));
        if (value?.startsWith(CANCELLED)) return this.#m.ok('cancelled');
      }
      const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
      const value = runningValue(token, origin);
      for (let tries = 0; tries < 2; tries++) {
        if (await this.#m.call((c) => c.add(key, value, ttlSeconds))) return this.#m.ok('claimed');
        const found = await this.#m.call((c) => c.getWithCas(key));
        if (found === null) continue; // expired between add and get: try once more
        if (found.value.startsWith(DONE)) return this.#m.ok('completed');
        if (found.value.startsWith(CANCELLED)) return this.#m.ok('cancelled');
        const holder = holderOf(found.value);
        const another = holder !== undefined && origin !== undefined && holder !== origin;
        if (!found.value.startsWith(LEAVING)) return this.#m.ok(another ? 'running-copy' : 'running');
        // The message on its way to the DLQ, delivered again; or, where memcached keeps no item
        // versions (-C: CAS 0), another message, handed back until the leaving claim is released.
        if (!another || found.cas === 0n) return this.#m.ok('running');
        // Left by a message on its way to the DLQ: free for this one. Deleted as read, then added again.
        await this.#m.call((c) => c.deleteIf(key, found.cas));
      }
      return this.#m.ok('running');
    } catch (error) {
      return this.#m.failed('unavailable', error);
    }
  }

  /** Touches the key if this token still holds it; see JobLock.extend. */
  async extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult> {
    const key = this.key(jobId);
    try {
      const value = await this.#m.call((c) => c.get(key));
      if (value?.startsWith(CANCELLED)) return this.#m.ok('cancelled');
      if (value === null || !runningUnder(value, token)) return this.#m.ok('lost');
      await this.#m.call((c) => c.touch(key, ttlSeconds));
      return this.#m.ok('held');
    } catch (error) {
      return this.#m.failed('unavailable', error);
    }
  }

  /** Sets the key to `done:<token>`; see JobLock.complete. */
  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#m.call((c) => c.set(this.key(jobId), DONE + token, ttlSeconds));
      return this.#m.ok(true);
    } catch (error) {
      return this.#m.failed(false, error);
    }
  }

  /** Deletes the key if this token still holds it (with the version read: CAS); one that failed is tried again after 1 s and 5 s. See JobLock.release. */
  async release(jobId: string, token: string): Promise<boolean> {
    if (await this.#release(jobId, token)) return true;
    // A lock left behind would hold the job until its TTL: its next deliveries would read "running
    // under this same message" and be handed back, each spending a receive. Try again a little later.
    for (const delayMs of RELEASE_RETRIES_MS) {
      const timer = setTimeout(() => {
        if (!this.#m.closed) void this.#release(jobId, token);
      }, delayMs);
      timer.unref();
    }
    return false;
  }

  async #release(jobId: string, token: string): Promise<boolean> {
    const key = this.key(jobId);
    try {
      // Deleted only as it was read (CAS): a lock that expired meanwhile and was claimed elsewhere stays.
      const found = await this.#m.call((c) => c.getWithCas(key));
      if (found !== null && heldBy(found.value, token)) await this.#m.call((c) => c.deleteIf(key, found.cas));
      return this.#m.ok(true);
    } catch (error) {
      return this.#m.failed(false, error);
    }
  }

  /**
   * Turns this token's `running:` value into `leaving:`, as read (CAS); see JobLock.leave. False
   * where memcached keeps no item versions (-C): a set over what was read cannot be made there.
   */
  async leave(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    const key = this.key(jobId);
    try {
      const found = await this.#m.call((c) => c.getWithCas(key));
      if (found === null || found.cas === 0n || !runningUnder(found.value, token)) return this.#m.ok(false);
      return this.#m.ok(await this.#m.call((c) => c.setIf(key, leavingValue(found.value), ttlSeconds, found.cas)));
    } catch (error) {
      return this.#m.failed(false, error);
    }
  }

  /** See JobLock.holder; undefined when memcached cannot be asked. */
  async holder(jobId: string): Promise<string | undefined> {
    try {
      const value = await this.#m.call((c) => c.get(this.key(jobId)));
      return this.#m.ok(value === null ? undefined : claimTokenOf(value));
    } catch (error) {
      return this.#m.failed(undefined, error);
    }
  }

  async markDeadLettered(originId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#m.call((c) => c.set(this.deadLetteredKey(originId), '1', ttlSeconds));
      return this.#m.ok(true);
    } catch (error) {
      return this.#m.failed(false, error);
    }
  }

  async cancel(jobId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#m.call((c) => c.set(this.key(jobId), CANCELLED + new Date().toISOString(), ttlSeconds));
      return this.#m.ok(true);
    } catch (error) {
      return this.#m.failed(false, error);
    }
  }

  /** Closes the memcached connection, which `permits`, `rates`, `allowances`, `drains` and `tenants` share. */
  close(): void {
    this.#m.close();
  }
}
