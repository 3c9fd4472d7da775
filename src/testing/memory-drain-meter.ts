import { drainMeterOn } from '../fleet/drain-meter.js';
import type { DrainMeter, KeptCapacity } from '../ports/drain-meter.js';
import { OnMemoryStore } from './memory-key-values.js';

/**
 * The drain meter in memory, for tests that run workers and producers in one process without
 * memcached: memcached's protocol (fleet/drain-meter.ts) on a MemoryKeyValues, passing the same
 * contract (test/contracts/drain-meter-port.test.ts). `down = true` makes it answer as an
 * unreachable memcached does.
 */
export class MemoryDrainMeter extends OnMemoryStore implements DrainMeter {
  readonly #meter = drainMeterOn(this.store, (name) => name);

  add(queueUrl: string, count: number): Promise<void> {
    return this.#meter.add(queueUrl, count);
  }

  read(queueUrl: string): Promise<number | undefined> {
    return this.#meter.read(queueUrl);
  }

  addHeld(queueUrl: string, period: number, count: number): Promise<void> {
    return this.#meter.addHeld(queueUrl, period, count);
  }

  readHeld(queueUrl: string, period: number): Promise<number | undefined> {
    return this.#meter.readHeld(queueUrl, period);
  }

  keepCapacity(queueUrl: string, capacity: KeptCapacity): Promise<void> {
    return this.#meter.keepCapacity(queueUrl, capacity);
  }

  keptCapacity(queueUrl: string): Promise<KeptCapacity | undefined> {
    return this.#meter.keptCapacity(queueUrl);
  }
}
