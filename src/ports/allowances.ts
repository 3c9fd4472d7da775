import type { Allowance } from '../core/allowance.js';

export type { Allowance };

/**
 * The allowances port: spillover allowances shared by every producer (see core/allowance.ts).
 * MemcachedLock has one on the same memcached (`lock.allowances`); `sqs-jobs/testing` has
 * MemoryAllowances. Never throws: a store that cannot be asked answers 'unavailable' (the producer
 * then uses its own buckets, as it does without memcached).
 */
export interface Allowances {
  /** Take up to `count` of `key`'s allowance in the window `now` falls in: how many it had (0 when spent), or 'unavailable'. */
  take(key: string, count: number, allowance: Allowance, now: number): Promise<number | 'unavailable'>;
}
