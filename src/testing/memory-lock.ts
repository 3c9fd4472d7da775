import { KeyValueLock } from '../fleet/lock.js';
import { MemoryKeyValues } from './memory-key-values.js';

/**
 * The dedupe lock in memory, for tests that run a worker without memcached: MemcachedLock's own
 * protocol (fleet/lock.ts) on a MemoryKeyValues, passing the same contract on a real memcached
 * (test/contracts/lock-port.test.ts). `down = true` makes every call answer as an unreachable
 * memcached does.
 */
export class MemoryLock extends KeyValueLock {
  readonly #store: MemoryKeyValues;

  /** `store`: the keys it keeps (default: its own). */
  constructor(store = new MemoryKeyValues()) {
    super(store, '');
    this.#store = store;
  }

  get down(): boolean {
    return this.#store.down;
  }

  set down(down: boolean) {
    this.#store.down = down;
  }
}
