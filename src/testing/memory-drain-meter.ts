import { type DrainMeter, isCapacity, type KeptCapacity } from '../ports/drain-meter.js';

/** Held periods kept per queue, as memcached keeps them a minute (20 periods of 3 s). */
const HELD_PERIODS_KEPT = 20;

/**
 * The drain meter in memory, for tests that run workers and producers in one process without
 * memcached. It passes the same contract as MemcachedLock's on a real memcached
 * (test/contracts/drain-meter-port.test.ts). `down = true` makes it answer as an unreachable
 * memcached does.
 */
export class MemoryDrainMeter implements DrainMeter {
  readonly #drained = new Map<string, number>();
  readonly #held = new Map<string, Map<number, number>>();
  readonly #capacity = new Map<string, KeptCapacity>();
  down = false;

  async add(queueUrl: string, count: number): Promise<void> {
    if (this.down || !valid(count)) return;
    this.#drained.set(queueUrl, (this.#drained.get(queueUrl) ?? 0) + count);
  }

  async read(queueUrl: string): Promise<number | undefined> {
    return this.down ? undefined : this.#drained.get(queueUrl);
  }

  async addHeld(queueUrl: string, period: number, count: number): Promise<void> {
    if (this.down || !valid(count)) return;
    const periods = this.#held.get(queueUrl) ?? new Map<number, number>();
    this.#held.set(queueUrl, periods);
    periods.set(period, (periods.get(period) ?? 0) + count);
    for (const p of periods.keys()) if (p <= period - HELD_PERIODS_KEPT) periods.delete(p);
  }

  async readHeld(queueUrl: string, period: number): Promise<number | undefined> {
    return this.down ? undefined : this.#held.get(queueUrl)?.get(period);
  }

  async keepCapacity(queueUrl: string, capacity: KeptCapacity): Promise<void> {
    if (!this.down && isCapacity(capacity)) this.#capacity.set(queueUrl, { perSecond: capacity.perSecond, at: capacity.at });
  }

  async keptCapacity(queueUrl: string): Promise<KeptCapacity | undefined> {
    return this.down ? undefined : this.#capacity.get(queueUrl);
  }
}

const valid = (count: number) => Number.isSafeInteger(count) && count > 0;
