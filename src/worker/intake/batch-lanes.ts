import { SQS_RECEIVE_LIMIT } from '../../core/sqs-limits.js';
import type { BatchHolding, CapacityLimits, Holding } from './holding.js';
import type { Reservations } from './reservations.js';

/** A poller's ask for room to receive, not yet granted: its lane, the most it asks for, and where its count goes. */
export interface Asking<Q> {
  readonly lane: Q | undefined;
  readonly max: number;
  readonly resolve: (count: number) => void;
}

/**
 * ReceiveCapacity's part for lanes that bring batch jobs' messages. Their messages fill batches,
 * not handler slots, so their receives draw on the batch budget: with the handlers' room alone
 * (concurrency + prefetch), a deep queue of batch items would have one or two receives out at once.
 * A queue counts as one only while its last receive brought nothing else; one that carries other
 * jobs too may still bring theirs meanwhile, so each such queue also goes no further past the
 * handlers' room than one round of its own polls (receiveConcurrency receives of ten).
 */
export class BatchLanes<Q> {
  readonly #batches: BatchHolding<Q>;
  readonly #holding: Holding<Q>;
  readonly #round: number;
  readonly #reserved: Reservations<Q>;

  constructor(batches: BatchHolding<Q>, holding: Holding<Q>, limits: CapacityLimits, reserved: Reservations<Q>) {
    this.#batches = batches;
    this.#holding = holding;
    this.#round = (limits.receiveConcurrency ?? 1) * SQS_RECEIVE_LIMIT;
    this.#reserved = reserved;
  }

  feeds(lane: Q | undefined): boolean {
    return lane !== undefined && this.#batches.feeds(lane);
  }

  /** Places promised to receives of lanes that bring batch jobs' messages. */
  promised(): number {
    return this.#reserved.sum((l) => this.#batches.feeds(l));
  }

  /**
   * What such a lane may ask for: the budget's room, less what such lanes were promised and what
   * it buffers; and no more than `handlersFree` (the handlers' room, which leaves such lanes'
   * receives out) plus one round of its polls, less its own promises and its messages waiting for
   * a permit or a rate slot.
   */
  free(lane: Q, handlersFree: number): number {
    const budget = this.#batches.room() - this.promised() - this.#holding.buffered(lane);
    const others = handlersFree + this.#round - this.#reserved.of(lane) - (this.#holding.waiting?.(lane) ?? 0);
    return Math.min(budget, others);
  }

  /**
   * Serve the waiting pollers of such lanes, in arrival order, with what each may have: they
   * neither wait for a full receive nor take turns with the other lanes. The others stay waiting.
   */
  grant(asking: Asking<Q>[], handlersFree: () => number): void {
    for (let i = 0; i < asking.length; ) {
      const ask = asking[i]!;
      const count = this.feeds(ask.lane) ? Math.min(ask.max, this.free(ask.lane!, handlersFree())) : 0;
      if (count <= 0) {
        i++;
        continue;
      }
      asking.splice(i, 1);
      this.#reserved.take(ask.lane, count, Date.now());
      ask.resolve(count);
    }
  }
}
