import type { JobInfo } from '../../core/job-events.js';
import { sleep } from '../../core/sleep.js';
import type { Activity } from '../activity.js';
import type { FateNeeds } from '../context.js';
import type { Acts } from './acts.js';
import type { Lease } from '../hold/lease.js';
import type { Scheduler } from '../intake/scheduler.js';
import type { QueueState } from '../queue-state.js';
import { describeLease } from '../run/read.js';
import { batchJobOf } from '../reading.js';
import type { Outcome } from '../decide/decide.js';
import { blocksGroup, retriesInPlace, waitsHere } from './outcome-rules.js';
import { retryInPlace } from './keep.js';
import { handBackUnstarted, settle } from './settle.js';

/** Where a message waits for its turn: the worker's waiting room (turns/room.ts). */
export interface Waits {
  /** Keep `lease` waiting (held, its claims let go) until its turn. */
  keep(lease: Lease, info: JobInfo, outcome: Extract<Outcome, { kind: 'wait' }>): void;
  /** A permit of `tenant` was given back here: a message waiting for one may start. */
  readonly permitFreed: (tenant: string) => void;
}

/**
 * Where every started message's outcome goes: settled (settle.ts), or kept here: waiting for its
 * turn (the waiting room, turns/room.ts), or, on FIFO, retried in place, its group waiting. Orders
 * a message's end with its FIFO group (a group whose message comes back must send its buffered
 * messages back behind it) and keeps every settle tracked until it ends.
 */
export class Fate {
  readonly #ctx: FateNeeds;
  readonly #acts: Acts;
  readonly #scheduler: Scheduler<QueueState>;
  readonly #activity: Activity;
  readonly #room: Waits;
  /** Start what can start now: called when a FIFO job retried here is due. */
  readonly #wake: () => void;

  /** Whether a message may be held past its walk (a FIFO job retried here); false in a Lambda invocation. */
  readonly #holds: boolean;

  constructor(
    ctx: FateNeeds,
    acts: Acts,
    scheduler: Scheduler<QueueState>,
    activity: Activity,
    room: Waits,
    wake: () => void,
    holds = true,
  ) {
    this.#holds = holds;
    this.#ctx = ctx;
    this.#acts = acts;
    this.#scheduler = scheduler;
    this.#activity = activity;
    this.#room = room;
    this.#wake = wake;
  }

  /**
   * A started message's outcome is known: settle it (or retry it here, or let it wait in the room
   * for its tenant's permit or its rate slot), and free or hand back its FIFO group; a permit it
   * gives back wakes a message waiting for one.
   */
  conclude(lease: Lease, info: JobInfo, outcome: Outcome): void {
    if (waitsHere(outcome, { leaseLost: lease.lost, stopping: this.#ctx.stop.signal.aborted })) {
      this.#room.keep(lease, info, outcome);
      return;
    }
    const fifo = this.#ctx.queueOf(lease.message.queueUrl).fifo;
    const batchItem = batchJobOf(lease.reading) !== undefined;
    if (retriesInPlace(outcome, { fifo, leaseLost: lease.lost, batchItem, holds: this.#holds })) {
      this.#activity.follow(retryInPlace(this.#ctx, lease, info, outcome).then(() => this.#retryLater(lease, outcome.delayMs)));
      return;
    }
    const behind = this.#scheduler.concluded(lease, blocksGroup(outcome));
    this.#activity.follow(settle(this.#ctx, this.#acts, lease, info, outcome, this.#room.permitFreed));
    if (behind.length > 0) this.#activity.follow(this.handBackUnstarted(behind, 'an earlier message of its FIFO group comes back first'));
  }

  /** Hand messages that were never started back to their queues at once (settle.ts's handBackUnstarted; `uncounted`: re-sent, at a deadline). */
  handBackUnstarted(leases: readonly Lease[], reason: string, uncounted = false): Promise<void> {
    return handBackUnstarted(this.#ctx, this.#acts, leases, reason, (lease) => describeLease(this.#ctx.config.jobs, lease), uncounted);
  }

  /**
   * A message that was to wait here and will not (stopping, lost, an error): handed back (a lost one
   * is only let go), and on FIFO its group's buffered messages go back behind it.
   */
  async handBackWaiting(lease: Lease, reason: string): Promise<void> {
    const behind = this.#scheduler.concluded(lease, true);
    const why = 'an earlier message of its FIFO group comes back first';
    if (lease.lost) {
      await this.#ctx.heartbeat.stopHolding(lease);
      if (behind.length > 0) await this.handBackUnstarted(behind, why);
      return;
    }
    await this.handBackUnstarted([lease], reason);
    if (behind.length > 0) await this.handBackUnstarted(behind, why);
  }

  /** Put a FIFO job back at the head of its group, to start after `delayMs`. */
  async #retryLater(lease: Lease, delayMs: number): Promise<void> {
    const stop = this.#ctx.stop.signal;
    if (stop.aborted || lease.lost) {
      // Stopping: hand it back. Lost meanwhile: SQS gives it out again, so its group's buffered
      // messages must go back behind it.
      const behind = this.#scheduler.concluded(lease, lease.lost);
      await this.handBackUnstarted(
        [lease, ...behind],
        lease.lost ? 'an earlier message of its FIFO group comes back first' : 'worker is stopping',
      );
      return;
    }
    this.#scheduler.retryLater(lease, delayMs);
    await sleep(delayMs, stop);
    this.#wake();
  }
}
