/**
 * The permits port: fleet-wide permits per key, for tenant caps (at most `cap` jobs of a tenant at
 * once) and exclusive batch keys (one flush of a key at once). Permit i of key k is held by one
 * token with a TTL, extended by the heartbeat, released when the job ends; a worker that dies
 * leaves its permit to expire. MemcachedLock has one on the same memcached (`lock.permits`).
 * Its methods should never throw: a store that cannot be asked answers 'unavailable' (take) or does
 * nothing (extend, release). The worker reads a throw from `take` as 'unavailable'.
 */
export interface Permits {
  /**
   * Take a free permit of `key` (one of `cap`): its index, 'full' when all are held, or
   * 'unavailable' when the store cannot be asked (then the job runs without the cap: caps degrade
   * to none, never to stuck jobs).
   */
  take(key: string, cap: number, token: string, ttlSeconds: number): Promise<number | 'full' | 'unavailable'>;
  /** Extend a permit still held by `token`; one held by another token is left alone. */
  extend(key: string, index: number, token: string, ttlSeconds: number): Promise<void>;
  /** Give a permit back, if `token` still holds it. */
  release(key: string, index: number, token: string): Promise<void>;
}
