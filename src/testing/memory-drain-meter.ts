import type { DrainMeter } from '../ports/drain-meter.js';

/**
 * The drain meter in memory, for tests that run workers and producers in one process without
 * memcached. It passes the same contract as MemcachedLock's on a real memcached
 * (test/contracts/drain-meter-port.test.ts). `down = true` makes it answer as an unreachable
 * memcached does.
 */
export class MemoryDrainMeter implements DrainMeter {
  readonly #counts = new Map<string, number>();
  down = false;

  add(queueUrl: string, count: number): Promise<void> {
    return this.#add(`drained\u0000${queueUrl}`, count);
  }

  read(queueUrl: string): Promise<number | undefined> {
    return this.#read(`drained\u0000${queueUrl}`);
  }

  addHeld(queueUrl: string, period: number, count: number): Promise<void> {
    return this.#add(`held\u0000${queueUrl}\u0000${period}`, count);
  }

  readHeld(queueUrl: string, period: number): Promise<number | undefined> {
    return this.#read(`held\u0000${queueUrl}\u0000${period}`);
  }

  async #add(key: string, count: number): Promise<void> {
    if (this.down || !Number.isSafeInteger(count) || count <= 0) return;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + count);
  }

  async #read(key: string): Promise<number | undefined> {
    return this.down ? undefined : this.#counts.get(key);
  }
}
