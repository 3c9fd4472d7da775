import type { Permits } from '../ports/permits.js';

/**
 * Fleet-wide permits in memory (tenant caps, exclusive batch keys), for a worker without
 * memcached: `createWorker({ lock: new MemoryLock(), permits: new MemoryPermits() })`. It passes the
 * same contract as memcached's (test/contracts/permits-port.test.ts). `down = true` makes every
 * call answer as an unreachable memcached does.
 */
export class MemoryPermits implements Permits {
  readonly #held = new Map<string, { token: string; expiresAt: number }>();
  down = false;

  async take(key: string, cap: number, token: string, ttlSeconds: number): Promise<number | 'full' | 'unavailable'> {
    if (this.down || !Number.isSafeInteger(cap) || cap < 1) return 'unavailable';
    for (let index = 0; index < cap; index++) {
      if (this.#holder(key, index) === undefined) {
        this.#held.set(`${key}/${index}`, { token, expiresAt: Date.now() + ttlSeconds * 1000 });
        return index;
      }
    }
    return 'full';
  }

  async extend(key: string, index: number, token: string, ttlSeconds: number): Promise<void> {
    if (this.down || this.#holder(key, index) !== token) return;
    this.#held.set(`${key}/${index}`, { token, expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async release(key: string, index: number, token: string): Promise<void> {
    if (this.down || this.#holder(key, index) !== token) return;
    this.#held.delete(`${key}/${index}`);
  }

  #holder(key: string, index: number): string | undefined {
    const found = this.#held.get(`${key}/${index}`);
    if (found === undefined || found.expiresAt <= Date.now()) return undefined;
    return found.token;
  }
}
