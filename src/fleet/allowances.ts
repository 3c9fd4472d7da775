import { createHash } from 'node:crypto';
import { allowanceWindow, withinAllowance } from '../core/allowance.js';
import type { Allowances } from '../ports/allowances.js';
import { type KeyValueCalls, MAX_RELATIVE_EXPIRY_S } from '../ports/key-values.js';

/** memcached refuses keys longer than this. */
const MAX_KEY = 250;

/**
 * Spillover allowances on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues):
 * window w of key `key` is the counter `allowance/<key>/<w>` under the lock's prefix, `incr`ed by
 * each send's count (created by the first, kept a minute past its window). A key too long for
 * memcached is hashed.
 */
export function allowancesOn(m: KeyValueCalls, prefixed: (name: string) => string): Allowances {
  const counter = (key: string, window: number) => {
    const name = prefixed(`allowance/${key}/${window}`);
    return name.length <= MAX_KEY ? name : prefixed(`allowance/#${createHash('sha256').update(key).digest('base64url')}/${window}`);
  };
  return {
    take: async (key, count, allowance, now) => {
      if (!Number.isSafeInteger(count) || count < 1) return 0;
      const window = allowanceWindow(allowance, now);
      const expires = Math.min(MAX_RELATIVE_EXPIRY_S, Math.max(1, Math.ceil(((window.index + 1) * window.ms - now) / 1000)) + 60);
      try {
        const value = await m.call((c) => c.increment(counter(key, window.index), count, count, expires));
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new Error(`memcached incr answered ${String(value)}`);
        return m.ok(withinAllowance(allowance, count, value));
      } catch (error) {
        return m.failed('unavailable' as const, error);
      }
    },
  };
}
