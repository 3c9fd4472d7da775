import type { RateLimit, RateSlot } from '../core/rate-limit.js';

export type { RateLimit, RateSlot };

/**
 * The rate limits port: fleet-wide starts per second per key (a job's `rateLimit`; with
 * `perTenant`, per job and tenant), one slot per start on a grid shared by every worker (see
 * core/rate-limit.ts). A slot once given is given to no one else; a slot given and not used is
 * lost (the rate errs low, never high). MemcachedLock has one on the same memcached
 * (`lock.rates`); `sqs-jobs/testing` has MemoryRateLimits. Never throws: a store that cannot be
 * asked answers 'unavailable' (the worker reads a throw the same way).
 */
export interface RateLimits {
  /**
   * The next free start of `key` under `limit`, at `now` (ms since the epoch) or later: its slot
   * (`reserved`), or, every window looked at being full, when to ask again; 'unavailable' when the
   * store cannot be asked (the job then runs without the limit, as a cap does).
   */
  reserve(key: string, limit: RateLimit, now: number): Promise<RateSlot | 'unavailable'>;
}
