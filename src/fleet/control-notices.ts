import { type KeyValueCalls, MAX_RELATIVE_EXPIRY_S } from '../ports/key-values.js';
import type { ControlNotices } from '../ports/control-store.js';

/**
 * Control notices on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues): one key,
 * `control/version`, holding the version of the control state last written. Losing it (a restart)
 * only makes each worker read the store once more.
 */
export function controlNoticesOn(m: KeyValueCalls, prefixed: (name: string) => string): ControlNotices {
  const key = prefixed('control/version');
  return {
    seen: async () => {
      try {
        return m.ok((await m.call((c) => c.get(key))) ?? undefined);
      } catch (error) {
        return m.failed('unavailable' as const, error);
      }
    },
    tell: async (version) => {
      try {
        await m.call((c) => c.set(key, version, MAX_RELATIVE_EXPIRY_S));
        return m.ok(true);
      } catch (error) {
        return m.failed(false, error);
      }
    },
    tellIfNone: async (version) => {
      try {
        return m.ok(await m.call((c) => c.add(key, version, MAX_RELATIVE_EXPIRY_S)));
      } catch (error) {
        return m.failed(false, error);
      }
    },
  };
}
