import { rateLimitsOn } from '../fleet/rate-limits.js';
import type { RateLimit, RateLimits, RateSlot } from '../ports/rate-limits.js';
import { OnMemoryStore } from './memory-key-values.js';

/**
 * Fleet-wide rate limits in memory, for workers in one process without memcached:
 * `createWorker({ lock: new MemoryLock(), rateLimits: new MemoryRateLimits() })`. memcached's
 * protocol (fleet/rate-limits.ts) on a MemoryKeyValues, passing the same contract
 * (test/contracts/rate-limits-port.test.ts). `down = true` makes every call answer as an
 * unreachable memcached does.
 */
export class MemoryRateLimits extends OnMemoryStore implements RateLimits {
  readonly #rates = rateLimitsOn(this.store, (name) => name);

  reserve(key: string, limit: RateLimit, now: number): Promise<RateSlot | 'unavailable'> {
    return this.#rates.reserve(key, limit, now);
  }
}
