import type { Lane } from './lanes.js';

/**
 * What each lane's poller last asked for, and what follows from it: which lanes have work (busy:
 * the last poll found some, so the next asks for more than one) and how much of the buffer a lane
 * needs (bufferQuota's water-filling). ReceiveCapacity records every ask here.
 */
export class LaneAsks<Q extends Lane> {
  /** Lanes whose poller last asked for more than one message. */
  readonly busy = new Set<Q>();
  readonly #asks = new Map<Q, number>();

  /** `lane`'s poller asks for `max`; true when the lane has work again after none (it just became busy). */
  asked(lane: Q, max: number): boolean {
    this.#asks.set(lane, max);
    if (max <= 1) {
      this.busy.delete(lane);
      return false;
    }
    if (this.busy.has(lane)) return false;
    this.busy.add(lane);
    return true;
  }

  /**
   * What `lane` needs of the buffer: all it can get while its poller asks for 10 (its last poll
   * found 5 or more, or came back as full as it was let), else its ask beside what it already
   * `holds` (buffered, and its other receives out).
   */
  need(lane: Q, holds: number): number {
    const ask = this.#asks.get(lane) ?? 10;
    return ask >= 10 ? Number.POSITIVE_INFINITY : ask + holds;
  }
}
