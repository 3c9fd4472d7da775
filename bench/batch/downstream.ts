/**
 * The downstream the items are for (an API, a database): a call costs 5 ms plus 0.1 ms per item,
 * simulated with a timer. Counts calls, items, and the most calls in flight at once.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export const CALL_MS = 5;
export const ITEM_MS = 0.1;

export class Downstream {
  calls = 0;
  items = 0;
  inFlight = 0;
  maxInFlight = 0;
  /** Items per call, in call order. */
  readonly sizes: number[] = [];

  /** One call carrying `items` items (all of one key, or of several when the caller mixes them). */
  async call(items: number): Promise<void> {
    this.calls++;
    this.items += items;
    this.sizes.push(items);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await sleep(CALL_MS + ITEM_MS * items);
    } finally {
      this.inFlight--;
    }
  }
}
