import { createHash } from 'node:crypto';
import { reserveSlot } from '../core/rate-limit.js';
import type { RateLimits } from '../ports/rate-limits.js';
import { type KeyValueCalls, MAX_RELATIVE_EXPIRY_S } from '../ports/key-values.js';

/** memcached refuses keys longer than this. */
const MAX_KEY = 250;

/**
 * Rate limits on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues): window k of
 * key `key` under a rate is the counter `rate/<key>/<perSecond>/<burst>/<k>` under the lock's
 * prefix (workers on another rate, during a deploy, keep to their own grid), taken with `incr` and
 * created by the first at its initial value, kept a minute past its window. A key too long for memcached is hashed.
 */
export function rateLimitsOn(m: KeyValueCalls, prefixed: (name: string) => string): RateLimits {
  const counter = (key: string, grid: string, window: number) => {
    const name = prefixed(`rate/${key}/${grid}/${window}`);
    return name.length <= MAX_KEY ? name : prefixed(`rate/#${createHash('sha256').update(`${key}/${grid}`).digest('base64url')}/${window}`);
  };
  return {
    reserve: async (key, limit, now) => {
      const grid = `${limit.perSecond}/${limit.burst}`;
      try {
        const slot = await reserveSlot(limit, now, async (window, initial, g) => {
          const expires = Math.min(MAX_RELATIVE_EXPIRY_S, Math.max(1, Math.ceil(((window + 1) * g.windowMs - now) / 1000)) + 60);
          const value = await m.call((c) => c.increment(counter(key, grid, window), 1, initial, expires));
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
