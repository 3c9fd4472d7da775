import type { Allowance } from '../core/allowance.js';
import { allowancesOn } from '../fleet/allowances.js';
import type { Allowances } from '../ports/allowances.js';
import { OnMemoryStore } from './memory-key-values.js';

/**
 * Spillover allowances in memory, shared by producers in one process:
 * `createProducer({ spillover: { …, allowances: new MemoryAllowances() } })`. memcached's protocol
 * (fleet/allowances.ts) on a MemoryKeyValues, passing the same contract
 * (test/contracts/allowances-port.test.ts). `down = true` makes every call answer as an
 * unreachable memcached does.
 */
export class MemoryAllowances extends OnMemoryStore implements Allowances {
  readonly #allowances = allowancesOn(this.store, (name) => name);

  take(key: string, count: number, allowance: Allowance, now: number): Promise<number | 'unavailable'> {
    return this.#allowances.take(key, count, allowance, now);
  }
}
