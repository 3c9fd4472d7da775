import { queueAccountOf, queueNameOf } from '../core/queue-url.js';
import { type DrainMeter, isCapacity, type KeptCapacity } from '../ports/drain-meter.js';
import { type KeyValueCalls, MAX_RELATIVE_EXPIRY_S } from '../ports/key-values.js';

/** A held period's sum outlives its reading (the period after it) by far; then memcached drops it. */
const HELD_EXPIRES_SECONDS = 60;

/**
 * The drain meter on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues), under
 * the lock's key prefix (so workers and producers that agree on the prefix and the queue agree on
 * the keys, whatever endpoint form their queue URLs take). `incr` with an initial value creates a counter:
 *   - `drained/<account>/<name>` never expires; an eviction restarts it (readers take that as a restart);
 *   - `held/<account>/<name>/<period>` expires a minute after it is made;
 *   - `capacity/<account>/<name>` holds the kept capacity as JSON (`{"perSecond":..,"at":..}`), set
 *     over the last one, for 30 days.
 */
export function drainMeterOn(m: KeyValueCalls, prefixed: (name: string) => string): DrainMeter {
  const queueKey = (queueUrl: string) => `${queueAccountOf(queueUrl) ?? '-'}/${queueNameOf(queueUrl)}`;
  const add = async (key: string, count: number, expires: number) => {
    if (!Number.isSafeInteger(count) || count <= 0) return;
    try {
      await m.call((c) => c.increment(key, count, count, expires));
      m.ok(undefined);
    } catch (error) {
      m.failed(undefined, error);
    }
  };
  const read = async (key: string) => {
    try {
      const value = await m.call((c) => c.get(key));
      const count = value === null ? undefined : Number(value);
      return m.ok(count !== undefined && Number.isSafeInteger(count) ? count : undefined);
    } catch (error) {
      return m.failed(undefined, error);
    }
  };
  const drainedKey = (queueUrl: string) => prefixed(`drained/${queueKey(queueUrl)}`);
  const capacityKey = (queueUrl: string) => prefixed(`capacity/${queueKey(queueUrl)}`);
  const heldKey = (queueUrl: string, period: number) => prefixed(`held/${queueKey(queueUrl)}/${period}`);
  return {
    add: (queueUrl, count) => add(drainedKey(queueUrl), count, 0),
    read: (queueUrl) => read(drainedKey(queueUrl)),
    addHeld: (queueUrl, period, count) => add(heldKey(queueUrl, period), count, HELD_EXPIRES_SECONDS),
    readHeld: (queueUrl, period) => read(heldKey(queueUrl, period)),
    keepCapacity: async (queueUrl, capacity) => {
      if (!isCapacity(capacity)) return;
      try {
        await m.call((c) => c.set(capacityKey(queueUrl), JSON.stringify(capacity), MAX_RELATIVE_EXPIRY_S));
        m.ok(undefined);
      } catch (error) {
        m.failed(undefined, error);
      }
    },
    keptCapacity: async (queueUrl) => {
      try {
        const value = await m.call((c) => c.get(capacityKey(queueUrl)));
        return m.ok(value === null ? undefined : parseCapacity(value));
      } catch (error) {
        return m.failed(undefined, error);
      }
    },
  };
}

/** A kept capacity as stored; undefined for anything else (another writer's value, a truncated one). */
function parseCapacity(text: string): KeptCapacity | undefined {
  try {
    const { perSecond, at } = JSON.parse(text) as Partial<KeptCapacity>;
    const c = { perSecond: Number(perSecond), at: Number(at) };
    return typeof perSecond === 'number' && typeof at === 'number' && isCapacity(c) ? c : undefined;
  } catch {
    return undefined;
  }
}
