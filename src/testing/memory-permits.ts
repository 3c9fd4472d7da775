import { permitsOn } from '../fleet/permits.js';
import type { Permits } from '../ports/permits.js';
import { OnMemoryStore } from './memory-key-values.js';

/**
 * Fleet-wide permits in memory (tenant caps, exclusive batch keys), for a worker without
 * memcached: `createWorker({ lock: new MemoryLock(), permits: new MemoryPermits() })`. memcached's
 * protocol (fleet/permits.ts) on a MemoryKeyValues, passing the same contract
 * (test/contracts/permits-port.test.ts). `down = true` makes every call answer as an unreachable
 * memcached does.
 */
export class MemoryPermits extends OnMemoryStore implements Permits {
  readonly #permits = permitsOn(this.store, (key, index) => `slot/${key}/${index}`);

  take(key: string, cap: number, token: string, ttlSeconds: number): Promise<number | 'full' | 'unavailable'> {
    return this.#permits.take(key, cap, token, ttlSeconds);
  }

  extend(key: string, index: number, token: string, ttlSeconds: number): Promise<void> {
    return this.#permits.extend(key, index, token, ttlSeconds);
  }

  release(key: string, index: number, token: string): Promise<void> {
    return this.#permits.release(key, index, token);
  }
}
