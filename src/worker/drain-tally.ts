import type { DrainMeter } from '../ports/drain-meter.js';

/**
 * Counts the messages this worker deleted, per queue, and adds them to the drain meter once per
 * `flushMs`: one memcached call per queue per flush, whatever the rate. What producers' admission
 * reads the drain rate from (src/producer/admission/).
 */
export class DrainTally {
  readonly #meter: DrainMeter;
  readonly #flushMs: number;
  readonly #counts = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(meter: DrainMeter, flushMs: number) {
    this.#meter = meter;
    this.#flushMs = flushMs;
  }

  /** `count` messages of `queueUrl` were deleted. */
  count(queueUrl: string, count: number): void {
    this.#counts.set(queueUrl, (this.#counts.get(queueUrl) ?? 0) + count);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => void this.flush(), this.#flushMs);
      this.#timer.unref();
    }
  }

  /** Add what was counted since the last flush (and wait for the adds before it). */
  flush(): Promise<void> {
    const counts = [...this.#counts];
    this.#counts.clear();
    // A meter should not reject; one that does loses those counts (the rate reads low for a moment), nothing more.
    const adds = () => Promise.all(counts.map(([url, n]) => this.#meter.add(url, n).catch(() => {})));
    this.#flushing = this.#flushing.then(adds).then(() => {});
    return this.#flushing;
  }

  /** Stop the timer and add what is left (shutdown, before the memcached client closes). */
  close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    return this.flush();
  }
}
