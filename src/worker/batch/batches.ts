import type { AnyBatchJob } from '../../core/batch-job.js';

/** What the buffer needs to know of a held item. */
export interface Held {
  /** When this worker received it (ms since the epoch): a batch's staleness counts from its oldest item. */
  readonly heldAt: number;
  readonly queueUrl: string;
}

/** Items of one job and key, to be handed to the handler together (at most the job's maxSize). */
export interface Batch<T extends Held> {
  readonly job: AnyBatchJob;
  readonly key: string;
  readonly items: T[];
  /** The rate slot reserved for its handler call when it was last tried (a rate-limited job whose turn was far off). */
  readonly rateSlotAt?: number;
}

interface Open<T extends Held> extends Omit<Batch<T>, 'rateSlotAt'> {
  /** Not flushed before this time: its key was being flushed elsewhere, or its rate's turn far off, when last tried. */
  notBefore: number;
  /** Kept for the next slice flushed (see Batch). */
  rateSlotAt: number | undefined;
}

/**
 * The batches filling in this worker: items grouped by job and key, in the order received. Pure
 * (time is passed in), so every flush rule has a unit test:
 * - full: a batch holding maxSize items is flushed at once (in slices of maxSize);
 * - stale: a batch whose oldest item has been held maxWaitMs is flushed whatever its size;
 * - early: a batch holding minSize items is flushed once the queue of its newest item had nothing
 *   more to give at its last receive (waiting longer would not fill it);
 * - budget: when the worker holds as many items as it may, the oldest batch is flushed (takeOldest).
 */
export class BatchBuffer<T extends Held> {
  readonly #open = new Map<string, Open<T>>();
  #held = 0;
  /**
   * No batch can be due before this time (takeDue looks only from then), and none full or stale
   * before #dueAt (nextDueAt). Lowered as items come in, made exact by each look: a pump with
   * nothing due costs no walk over the batches.
   */
  #lookAt = Number.POSITIVE_INFINITY;
  #dueAt = Number.POSITIVE_INFINITY;

  /** Items held in batches that are filling (not those being flushed). */
  get held(): number {
    return this.#held;
  }

  get batches(): number {
    return this.#open.size;
  }

  add(job: AnyBatchJob, key: string, item: T): void {
    const id = `${job.name}\u0000${key}`;
    let open = this.#open.get(id);
    if (open === undefined) {
      open = { job, key, items: [], notBefore: 0, rateSlotAt: undefined };
      this.#open.set(id, open);
    }
    open.items.push(item);
    this.#held++;
    this.#note(open);
  }

  /**
   * Take out every batch due now: full, stale, or (when `drained(queueUrl)` says its newest item's
   * queue had nothing more at once) at least minSize. A batch over maxSize gives one slice per maxSize items.
   * `everything`: every batch not waiting for its key (notBefore), whatever its size.
   */
  takeDue(now: number, drained: (queueUrl: string) => boolean, everything = false): Batch<T>[] {
    if (now < this.#lookAt && !everything) return [];
    const due: Batch<T>[] = [];
    const isDue = (open: Open<T>) => {
      if (everything) return open.items.length > 0;
      const { maxSize, maxWaitMs, minSize } = open.job;
      const size = open.items.length;
      if (size >= maxSize) return true;
      if (now - open.items[0]!.heldAt >= maxWaitMs) return true; // stale
      return size >= minSize && drained(open.items[size - 1]!.queueUrl); // early
    };
    this.#lookAt = this.#dueAt = Number.POSITIVE_INFINITY;
    for (const [id, open] of this.#open) {
      if (open.notBefore <= now) while (this.#open.has(id) && isDue(open)) due.push(this.#slice(id, open));
      if (this.#open.has(id)) this.#note(open);
    }
    return due;
  }

  /**
   * Take out the batch whose oldest item has been held longest, whatever its size (the worker holds
   * all it may); not one waiting for its key (notBefore after `now`).
   */
  takeOldest(now: number): Batch<T> | undefined {
    let oldest: [string, Open<T>] | undefined;
    for (const entry of this.#open) {
      if (entry[1].notBefore > now) continue;
      if (oldest === undefined || entry[1].items[0]!.heldAt < oldest[1].items[0]!.heldAt) oldest = entry;
    }
    return oldest === undefined ? undefined : this.#slice(...oldest);
  }

  /** When the next batch turns due by time (stale, or a full one tried again), or undefined when nothing is held. */
  nextDueAt(): number | undefined {
    return this.#dueAt === Number.POSITIVE_INFINITY ? undefined : this.#dueAt;
  }

  /** Lower #lookAt and #dueAt to what `open` needs: when it turns full or stale, and when it may be flushed early. */
  #note(open: Open<T>): void {
    const size = open.items.length;
    const staleAt = open.items[0]!.heldAt + open.job.maxWaitMs;
    const dueAt = Math.max(open.notBefore, size >= open.job.maxSize ? 0 : staleAt);
    const lookAt = Math.max(open.notBefore, size >= open.job.minSize ? 0 : staleAt);
    if (dueAt < this.#dueAt) this.#dueAt = dueAt;
    if (lookAt < this.#lookAt) this.#lookAt = lookAt;
  }

  /** When the first batch waiting for its key may be tried again (at the budget, any batch is due then), or undefined. */
  nextRetryAt(now: number): number | undefined {
    let next: number | undefined;
    for (const open of this.#open.values()) {
      if (open.notBefore > now && (next === undefined || open.notBefore < next)) next = open.notBefore;
    }
    return next;
  }

  /**
   * A batch that could not be flushed now (its key is being flushed elsewhere, or its rate's turn is
   * far off: `rateSlotAt`, the slot it keeps for its next call) goes back ahead of
   * what arrived since, to be tried again from `retryAt`. `behind`: items held back from a call
   * that ran without them (their tenant at its cap) go behind what arrived since instead, leaving
   * the batch's own time alone, so they never keep the others from the next call.
   */
  putBack(batch: Batch<T>, retryAt: number, rateSlotAt?: number, behind = false): void {
    const id = `${batch.job.name}\u0000${batch.key}`;
    const open = this.#open.get(id);
    if (open === undefined) {
      this.#open.set(id, { job: batch.job, key: batch.key, items: [...batch.items], notBefore: retryAt, rateSlotAt });
    } else if (behind) {
      open.items.push(...batch.items);
    } else {
      open.items.unshift(...batch.items);
      open.notBefore = retryAt;
      open.rateSlotAt = rateSlotAt;
    }
    this.#held += batch.items.length;
    this.#note(this.#open.get(id)!);
  }

  /** Take out the items `drop` picks (e.g. leases lost while they waited), wherever they are. */
  remove(drop: (item: T) => boolean): T[] {
    const removed: T[] = [];
    for (const [id, open] of this.#open) {
      const kept: T[] = [];
      for (const item of open.items) (drop(item) ? removed : kept).push(item);
      if (kept.length === open.items.length) continue;
      if (kept.length === 0) this.#open.delete(id);
      else {
        open.items.splice(0, open.items.length, ...kept);
        this.#note(open); // its first item may be older now (items put back behind): it may be due sooner
      }
    }
    this.#held -= removed.length;
    return removed;
  }

  /** Take out every batch, in slices of maxSize (shutdown). */
  takeAll(): Batch<T>[] {
    const all: Batch<T>[] = [];
    for (const [id, open] of this.#open) {
      while (this.#open.has(id)) all.push(this.#slice(id, open));
    }
    return all;
  }

  /** The first maxSize items of a batch; the batch stays open with the rest, if any. */
  #slice(id: string, open: Open<T>): Batch<T> {
    const items = open.items.splice(0, open.job.maxSize);
    if (open.items.length === 0) this.#open.delete(id);
    this.#held -= items.length;
    const rateSlotAt = open.rateSlotAt;
    open.rateSlotAt = undefined; // one handler call's slot: the first slice's
    return rateSlotAt === undefined ? { job: open.job, key: open.key, items } : { job: open.job, key: open.key, items, rateSlotAt };
  }
}
