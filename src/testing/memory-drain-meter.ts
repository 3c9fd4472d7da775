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

  async add(queueUrl: string, count: number): Promise<void> {
    if (this.down || !Number.isSafeInteger(count) || count <= 0) return;
    this.#counts.set(queueUrl, (this.#counts.get(queueUrl) ?? 0) + count);
  }

  async read(queueUrl: string): Promise<number | undefined> {
    return this.down ? undefined : this.#counts.get(queueUrl);
  }
}
