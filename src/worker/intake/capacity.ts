/**
 * How many more messages the worker may ask SQS for: `limit` (concurrency + prefetch) less what
 * it holds (running and buffered, from `held()`) less what open receive calls were promised.
 *
 * Reservations are made synchronously, so pollers woken together cannot count the same slots
 * twice, and in arrival order, so a poller that just freed a slot cannot take it again ahead of
 * one already waiting (with one slot and two queues, both queues get polled in turn).
 */
export class ReceiveCapacity {
  readonly #limit: number;
  readonly #held: () => number;
  #reserved = 0;
  #waiters: ((count: number) => void)[] = [];
  #closed = false;

  constructor(limit: number, held: () => number) {
    this.#limit = limit;
    this.#held = held;
  }

  get reserved(): number {
    return this.#reserved;
  }

  /** Up to `max` slots, as soon as any are free; 0 once closed. */
  reserve(max = 10): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    if (this.#waiters.length === 0) {
      const count = Math.min(max, this.#free());
      if (count > 0) {
        this.#reserved += count;
        return Promise.resolve(count);
      }
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** A receive promised `count` slots has ended; what it brought is already counted by held(). */
  returnSlots(count: number): void {
    this.#reserved -= count;
    this.grant();
  }

  /** Capacity may have changed: hand it to waiting pollers, first come first served. */
  grant(): void {
    while (this.#waiters.length > 0) {
      const count = Math.min(10, this.#free());
      if (count <= 0) return;
      this.#reserved += count;
      this.#waiters.shift()!(count);
    }
  }

  /** Wake every waiter with 0; later calls to reserve() resolve 0 at once. */
  close(): void {
    this.#closed = true;
    for (const wake of this.#waiters.splice(0)) wake(0);
  }

  #free(): number {
    return this.#limit - this.#held() - this.#reserved;
  }
}
