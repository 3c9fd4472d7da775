import type memjs from 'memjs';
import type { Permits } from '../ports/permits.js';

/** How a MemcachedLock makes its calls: within its deadline, and reporting memcached's availability. */
export interface MemcachedCalls {
  call<T>(op: (client: memjs.Client) => Promise<T>): Promise<T>;
  /** A call answered: memcached is up. */
  ok<T>(result: T): T;
  /** A call failed: answer `result` (memcached is down, or this was a late failure of a replaced client). */
  failed<T>(result: T, error: unknown): T;
}

/** memcached reads an expiry past 30 days as a point in time: relative expiries are kept under it. */
export const MAX_RELATIVE_EXPIRY_S = 30 * 24 * 3600 - 1;

/**
 * Whether `error` is memcached's answer to a request (memjs: "MemJS <OP>: <status>", e.g. an
 * append that would pass the item size limit): the connection works, memcached is up.
 */
export function isMemcachedAnswer(error: unknown): boolean {
  return error instanceof Error && /^MemJS [A-Z]+: /.test(error.message);
}

/**
 * Fleet-wide permits on a MemcachedLock's memcached (tenant caps, exclusive batch keys): permit i
 * of `key` is the memcached key `slotKey(key, i)`, taken with `add`. A tenant is printable ASCII
 * without spaces (the envelope's rule), so it fits a memcached key. ("slot/" is the key's name
 * since 0.1: workers of both versions must agree on it.)
 */
export function memcachedPermits(m: MemcachedCalls, slotKey: (key: string, index: number) => string): Permits {
  return {
    take: async (key, cap, token, ttlSeconds) => {
      if (!Number.isSafeInteger(cap) || cap < 1) return 'unavailable';
      try {
        // Start at a random permit, so workers do not all race for permit 0.
        const first = Math.floor(Math.random() * cap);
        for (let i = 0; i < cap; i++) {
          const index = (first + i) % cap;
          if (await m.call((c) => c.add(slotKey(key, index), token, { expires: ttlSeconds }))) return m.ok(index);
        }
        return m.ok('full' as const);
      } catch (error) {
        return m.failed('unavailable' as const, error);
      }
    },
    extend: async (key, index, token, ttlSeconds) => {
      try {
        const { value } = await m.call((c) => c.get(slotKey(key, index)));
        if (value !== null && value.toString() === token) await m.call((c) => c.touch(slotKey(key, index), ttlSeconds));
      } catch (error) {
        m.failed(undefined, error);
      }
    },
    release: async (key, index, token) => {
      try {
        const { value } = await m.call((c) => c.get(slotKey(key, index)));
        if (value !== null && value.toString() === token) await m.call((c) => c.delete(slotKey(key, index)));
      } catch (error) {
        m.failed(undefined, error);
      }
    },
  };
}
