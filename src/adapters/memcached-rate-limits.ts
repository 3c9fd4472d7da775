import { createHash } from 'node:crypto';
import { reserveSlot } from '../core/rate-limit.js';
import type { RateLimits } from '../ports/rate-limits.js';
import type { MemcachedCalls } from './memcached-permits.js';

/** memcached refuses keys longer than this. */
const MAX_KEY = 250;

/**
 * Rate limits on a MemcachedLock's memcached: window k of key `key` is the counter
 * `rate/<key>/<k>` under the lock's prefix, taken with `incr` (created by its first `incr`, kept
 * a minute past its window's end). A key too long for memcached is hashed.
 */
export function memcachedRateLimits(m: MemcachedCalls, prefixed: (name: string) => string): RateLimits {
  const counter = (key: string, window: number) => {
    const name = prefixed(`rate/${key}/${window}`);
    return name.length <= MAX_KEY ? name : prefixed(`rate/#${createHash('sha256').update(key).digest('base64url')}/${window}`);
  };
  return {
    reserve: async (key, limit, now) => {
      try {
        const slot = await reserveSlot(limit, now, async (window, by, grid) => {
          const expires = Math.ceil(((window + 1) * grid.windowMs - now) / 1000) + 60;
          const { value } = await m.call((c) => c.increment(counter(key, window), by, { initial: by, expires }));
          if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Error(`memcached incr answered ${String(value)}`);
          return value;
        });
        return m.ok(slot);
      } catch (error) {
        return m.failed('unavailable' as const, error);
      }
    },
  };
}
