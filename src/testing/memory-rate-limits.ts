import { reserveSlot } from '../core/rate-limit.js';
import type { RateLimit, RateLimits, RateSlot } from '../ports/rate-limits.js';

/**
 * Fleet-wide rate limits in memory, for workers in one process without memcached:
 * `createWorker({ lock: new MemoryLock(), rateLimits: new MemoryRateLimits() })`. It takes slots as
 * memcached's does (the same reserveSlot) and passes the same contract
 * (test/contracts/rate-limits-port.test.ts). `down = true` makes every call answer as an
 * unreachable memcached does.
 */
export class MemoryRateLimits implements RateLimits {
  readonly #counts = new Map<string, { count: number; until: number }>();
  down = false;

  async reserve(key: string, limit: RateLimit, now: number): Promise<RateSlot | 'unavailable'> {
    if (this.down) return 'unavailable';
    this.#forgetEnded(now);
    return reserveSlot(limit, now, async (window, initial, grid) => {
      const name = `${key}/${limit.perSecond}/${limit.burst}/${window}`;
      const c = this.#counts.get(name);
      if (c !== undefined) return ++c.count;
      this.#counts.set(name, { count: initial, until: (window + 1) * grid.windowMs + 60_000 });
      return initial;
    });
  }

  #forgetEnded(now: number): void {
    if (this.#counts.size < 1_000) return;
    for (const [name, c] of this.#counts) if (c.until < now) this.#counts.delete(name);
  }
}
