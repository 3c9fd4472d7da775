import type { TierPick } from '../config.js';

// What ReceiveCapacity is given: the worker's limits, and a view of what it holds now.

/** What the worker holds now: handlers running, and received messages not yet started (per lane). */
export interface Holding<Q> {
  running(): number;
  /** Buffered messages: of `lane`, or of every lane. */
  buffered(lane?: Q): number;
  /** Buffered messages that could start now (not FIFO messages behind their group, not those due later); default: buffered(). */
  startable?(): number;
  /** Messages of `lane` held waiting (for a permit, a rate slot) that count against receiving more from it. */
  waiting?(lane: Q): number;
  /** Batch jobs' messages (a worker with batch jobs): they fill batches, not handler slots. */
  batches?: BatchHolding<Q>;
}

/** What ReceiveCapacity needs to know of batch jobs' messages. */
export interface BatchHolding<Q> {
  /** `lane`'s last receive that brought anything brought batch jobs' messages only: its receives fill the batch budget. */
  feeds(lane: Q): boolean;
  /** How many more batch jobs' messages the worker may hold (its batch budget's room). */
  room(): number;
}

export interface CapacityLimits {
  readonly concurrency: number;
  /** Unstarted messages held beyond the free handler slots. */
  readonly prefetch: number;
  readonly pick?: TierPick;
  /** The most receives a queue keeps out at once (default 1): a queue that brings batch jobs' messages may go one such round past the handlers' room. */
  readonly receiveConcurrency?: number;
}
