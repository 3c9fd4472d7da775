import type { KeyValueCalls } from '../ports/key-values.js';
import type { TickRota } from '../ports/tick-rota.js';

/** A second's turn is remembered past the second by this long (clocks across the fleet differ by less). */
const TURN_EXPIRES_S = 10;

/**
 * The tick rota on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues): the worker
 * whose `add` of `tick/<jobs>/<shard>/<second>` succeeds reads that shard that second. An
 * unreachable store answers true: every worker reads, as without one.
 */
export function tickRotaOn(m: KeyValueCalls, prefixed: (name: string) => string): TickRota {
  return {
    mine: async (jobs, shard, second) => {
      try {
        return m.ok(await m.call((c) => c.add(prefixed(`tick/${jobs}/${shard}/${second}`), '1', TURN_EXPIRES_S)));
      } catch (error) {
        return m.failed(true, error);
      }
    },
  };
}
