import { type Lane, LanePicker, type TierPick } from './lanes.js';

interface Waiter<Q> {
  readonly lane: Q | undefined;
  readonly max: number;
  readonly resolve: (count: number) => void;
}

/**
 * How many more messages the worker may ask SQS for: `limit` (concurrency + prefetch) less what
 * it holds (running and buffered, from `held()`) less what open receive calls were promised.
 *
 * Reservations are made synchronously, so pollers woken together cannot count the same slots
 * twice. Pollers waiting for room are served by their lanes (see LanePicker: a higher tier first
 * under strict, else by weight), in arrival order within a lane; a poller that just freed a slot
 * cannot take it again ahead of one already waiting (with one slot and two queues, both get polled).
 */
export class ReceiveCapacity<Q extends Lane = Lane> {
  readonly #limit: number;
  readonly #held: () => number;
  readonly #picker: LanePicker<Q>;
  #reserved = 0;
  #waiters: Waiter<Q>[] = [];
  #closed = false;

  constructor(limit: number, held: () => number, pick?: TierPick) {
    this.#limit = limit;
    this.#held = held;
    this.#picker = new LanePicker(pick);
  }

  get reserved(): number {
    return this.#reserved;
  }

  /** Up to `max` (at most 10) slots for a receive from `lane`, as soon as any are free and it is the lane's turn; 0 once closed. */
  reserve(lane?: Q, max = 10): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    if (this.#waiters.length === 0) {
      const count = Math.min(max, 10, this.#free());
      if (count > 0) {
        this.#reserved += count;
        return Promise.resolve(count);
      }
    }
    return new Promise((resolve) => this.#waiters.push({ lane, max, resolve }));
  }

  /** A receive promised `count` slots has ended; what it brought is already counted by held(). */
  returnSlots(count: number): void {
    this.#reserved -= count;
    this.grant();
  }

  /** Capacity may have changed: hand it to waiting pollers, the lane whose turn it is first. */
  grant(): void {
    while (this.#waiters.length > 0) {
      const free = Math.min(10, this.#free());
      if (free <= 0) return;
      const waiter = this.#waiters.splice(this.#next(), 1)[0]!;
      const count = Math.min(free, waiter.max);
      this.#reserved += count;
      waiter.resolve(count);
    }
  }

  /** The waiter to serve: the first of the lane the picker chooses among those waiting. */
  #next(): number {
    const lanes = [...new Set(this.#waiters.map((w) => w.lane))];
    if (lanes.length === 1 || lanes.includes(undefined)) return 0;
    const lane = this.#picker.choose(lanes as Q[]);
    return this.#waiters.findIndex((w) => w.lane === lane);
  }

  /** Wake every waiter with 0; later calls to reserve() resolve 0 at once. */
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.resolve(0);
  }

  #free(): number {
    return this.#limit - this.#held() - this.#reserved;
  }
}
