import type { KeyValueCalls } from '../ports/key-values.js';
import type { Permits } from '../ports/permits.js';

/**
 * Fleet-wide permits (tenant caps, exclusive batch keys) on a key-value store (a MemcachedLock's
 * memcached, or MemoryKeyValues): permit i of `key` is the key `slotKey(key, i)`, taken with `add`,
 * starting at a random one so workers do not all race for permit 0. A tenant is printable ASCII
 * without spaces (the envelope's rule), so it fits a memcached key. ("slot/" is the key's name
 * since 0.1: workers of both versions must agree on it.)
 */
export function permitsOn(m: KeyValueCalls, slotKey: (key: string, index: number) => string): Permits {
  return {
    take: async (key, cap, token, ttlSeconds) => {
      if (!Number.isSafeInteger(cap) || cap < 1) return 'unavailable';
      try {
        // Start at a random permit, so workers do not all race for permit 0.
        const first = Math.floor(Math.random() * cap);
        for (let i = 0; i < cap; i++) {
          const index = (first + i) % cap;
          if (await m.call((c) => c.add(slotKey(key, index), token, ttlSeconds))) return m.ok(index);
        }
        return m.ok('full' as const);
      } catch (error) {
        return m.failed('unavailable' as const, error);
      }
    },
    extend: async (key, index, token, ttlSeconds) => {
      try {
        const value = await m.call((c) => c.get(slotKey(key, index)));
        if (value !== null && value === token) await m.call((c) => c.touch(slotKey(key, index), ttlSeconds));
      } catch (error) {
        m.failed(undefined, error);
      }
    },
    release: async (key, index, token) => {
      try {
        // Deleted only as it was read (CAS): a permit that expired meanwhile and was taken elsewhere stays.
        const found = await m.call((c) => c.getWithCas(slotKey(key, index)));
        if (found !== null && found.value === token) await m.call((c) => c.deleteIf(slotKey(key, index), found.cas));
      } catch (error) {
        m.failed(undefined, error);
      }
    },
  };
}
