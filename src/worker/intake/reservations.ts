/** A receive out this long is waiting on an empty queue: SQS answers at once when it has messages. */
export const LONG_POLL_MS = 1_000;

/**
 * The places promised to receives still out, in total and per lane, and when each lane's current
 * receive was granted (one out LONG_POLL_MS or more waits on a queue that has run dry).
 * ReceiveCapacity's ledger: it decides, this counts.
 */
export class Reservations<Q> {
  #total = 0;
  readonly #byLane = new Map<Q | undefined, number>();
  readonly #grantedAt = new Map<Q | undefined, number>();

  get total(): number {
    return this.#total;
  }

  /** Places promised to `lane`'s receives out now. */
  of(lane: Q | undefined): number {
    return Math.max(0, this.#byLane.get(lane) ?? 0);
  }

  take(lane: Q | undefined, count: number, now: number): void {
    this.#total += count;
    this.#byLane.set(lane, (this.#byLane.get(lane) ?? 0) + count);
    this.#grantedAt.set(lane, now);
  }

  give(lane: Q | undefined, count: number): void {
    this.#total -= count;
    this.#byLane.set(lane, (this.#byLane.get(lane) ?? 0) - count);
  }

  /** `lane` has a receive out that was granted LONG_POLL_MS ago or more. */
  isStale(lane: Q | undefined, now: number): boolean {
    return this.of(lane) > 0 && now - (this.#grantedAt.get(lane) ?? now) >= LONG_POLL_MS;
  }

  /** Places promised to receives not yet stale, of the lanes `counts` accepts. */
  live(now: number, counts: (lane: Q | undefined) => boolean): number {
    let n = 0;
    for (const [lane, count] of this.#byLane) if (count > 0 && counts(lane) && !this.isStale(lane, now)) n += count;
    return n;
  }

  /** Places promised to the lanes `pick` accepts. */
  sum(pick: (lane: Q) => boolean): number {
    let n = 0;
    for (const [lane, count] of this.#byLane) if (lane !== undefined && count > 0 && pick(lane)) n += count;
    return n;
  }

  /** When the next receive out now turns stale, or undefined when none is out or all are stale already. */
  nextStaleAt(now: number): number | undefined {
    let next: number | undefined;
    for (const [lane, count] of this.#byLane) {
      const staleAt = (this.#grantedAt.get(lane) ?? now) + LONG_POLL_MS;
      if (count > 0 && staleAt > now && (next === undefined || staleAt < next)) next = staleAt;
    }
    return next;
  }
}
