import { queueAccountOf, queueNameOf } from '../core/queue-url.js';
import type { DrainMeter } from '../ports/drain-meter.js';
import type { MemcachedCalls } from './memcached-connection.js';

/**
 * The drain meter on a MemcachedLock's memcached: one counter per queue, `drained/<account>/<name>`
 * under the lock's key prefix (so workers and producers that agree on the prefix and the queue
 * agree on the key, whatever endpoint form their queue URLs take). `incr` with an initial value
 * creates it; it never expires, and an eviction restarts it (readers take that as a restart).
 */
export function memcachedDrainMeter(m: MemcachedCalls, prefixed: (name: string) => string): DrainMeter {
  const key = (queueUrl: string) => prefixed(`drained/${queueAccountOf(queueUrl) ?? '-'}/${queueNameOf(queueUrl)}`);
  return {
    add: async (queueUrl, count) => {
      if (!Number.isSafeInteger(count) || count <= 0) return;
      try {
        await m.call((c) => c.increment(key(queueUrl), count, { initial: count, expires: 0 }));
        m.ok(undefined);
      } catch (error) {
        m.failed(undefined, error);
      }
    },
    read: async (queueUrl) => {
      try {
        const { value } = await m.call((c) => c.get(key(queueUrl)));
        const count = value === null ? undefined : Number(value.toString());
        return m.ok(count !== undefined && Number.isSafeInteger(count) ? count : undefined);
      } catch (error) {
        return m.failed(undefined, error);
      }
    },
  };
}
