import type { JobInfo } from '../../core/job-events.js';
import { sleep } from '../../core/sleep.js';
import type { Activity } from '../activity.js';
import type { WorkerContext } from '../context.js';
import type { Lease } from '../hold/lease.js';
import type { Scheduler } from '../intake/scheduler.js';
import type { QueueState } from '../queue-state.js';
import { describeLease } from '../run/read.js';
import { batchJobOf } from '../run/reading.js';
import type { Outcome, WaitUntil } from './decide.js';
import { blocksGroup, retriesInPlace, waitsHere } from './outcome-rules.js';
import { letWait, retryInPlace } from './keep.js';
import { handBackUnstarted, settle } from './settle.js';

/**
 * The way into settle for the rest of the worker: orders a message's end with its FIFO group (a
 * group whose message comes back must send its buffered messages back behind it, and a failed
 * FIFO job is retried here, its group waiting) and keeps every settle tracked until it ends.
 */
export class Fate {
  readonly #ctx: WorkerContext;
  readonly #scheduler: Scheduler<QueueState>;
  readonly #activity: Activity;
  /** Start what can start now: called when a FIFO job retried here is due, or a permit may be free. */
  readonly #wake: () => void;
  /** Per tenant with messages waiting here for a permit: the timer that lets one ask again. */
  readonly #polls = new Map<string, NodeJS.Timeout>();
  /** Per queue, messages on their way to wait here (their claims being let go): not in the buffer yet, no longer running. */
  readonly #goingToWait = new Map<string, number>();
  /** The same, per tenant whose permit they are to wait for. */
  readonly #goingToWaitFor = new Map<string, number>();

  constructor(ctx: WorkerContext, scheduler: Scheduler<QueueState>, activity: Activity, wake: () => void) {
    this.#ctx = ctx;
    this.#scheduler = scheduler;
    this.#activity = activity;
    this.#wake = wake;
  }

  /**
   * A started message's outcome is known: settle it (or retry it here, or let it wait here for its
   * tenant's permit or its rate slot), and free or hand back its FIFO group; a permit it gives back
   * wakes a message waiting for one.
   */
  conclude(lease: Lease, info: JobInfo, outcome: Outcome): void {
    if (waitsHere(outcome, { leaseLost: lease.lost, stopping: this.#ctx.stop.signal.aborted })) {
      const first = !this.#scheduler.hasWaited(lease);
      const url = lease.message.queueUrl;
      const tenant = 'permitOf' in outcome.until ? outcome.until.permitOf : undefined;
      this.#goingToWait.set(url, (this.#goingToWait.get(url) ?? 0) + 1);
      if (tenant !== undefined) this.#goingToWaitFor.set(tenant, (this.#goingToWaitFor.get(tenant) ?? 0) + 1);
      const arrived = () => {
        this.#goingToWait.set(url, this.#goingToWait.get(url)! - 1);
        if (tenant === undefined) return;
        const left = this.#goingToWaitFor.get(tenant)! - 1;
        if (left === 0) this.#goingToWaitFor.delete(tenant);
        else this.#goingToWaitFor.set(tenant, left);
      };
      this.#activity.track(
        letWait(this.#ctx, lease, info, outcome, first).then(
          (freed) => {
            arrived();
            if (freed !== undefined) this.#permitFreed(freed);
            return this.#wait(lease, outcome.until);
          },
          (error: unknown) => {
            arrived();
            this.#ctx.onError('wait', error);
            return this.handBackWaiting(lease, 'internal error while it was to wait');
          },
        ),
      );
      return;
    }
    const fifo = this.#ctx.queueOf(lease.message.queueUrl).fifo;
    const batchItem = batchJobOf(lease.reading) !== undefined;
    if (retriesInPlace(outcome, { fifo, leaseLost: lease.lost, batchItem })) {
      this.#activity.track(retryInPlace(this.#ctx, lease, info, outcome).then(() => this.#retryLater(lease, outcome.delayMs)));
      return;
    }
    const behind = this.#scheduler.finish(lease, blocksGroup(outcome));
    this.#activity.track(settle(this.#ctx, lease, info, outcome, this.#permitFreed));
    if (behind.length > 0) this.handBack(behind, 'an earlier message of its FIFO group comes back first');
  }

  /** Messages waiting here for a permit or a rate slot, and those on their way to: of one queue, or of all. */
  waiting(queueUrl?: string): number {
    if (queueUrl !== undefined) return this.#scheduler.waitingOf(queueUrl) + (this.#goingToWait.get(queueUrl) ?? 0);
    let going = 0;
    for (const n of this.#goingToWait.values()) going += n;
    return this.#scheduler.waiting + going;
  }

  /** Messages waiting here for a permit of `tenant`, and those on their way to. */
  waitingFor(tenant: string): number {
    return this.#scheduler.waitingFor(tenant) + (this.#goingToWaitFor.get(tenant) ?? 0);
  }

  /** A permit of `tenant` was given back (settle tells it before its own calls): the longest waiting job may start. */
  readonly #permitFreed = (tenant: string): void => {
    if (this.#scheduler.permitFreed(tenant)) this.#wake();
  };

  /** Stop the permit polls (shutdown; safe to call twice). */
  close(): void {
    for (const poll of this.#polls.values()) clearInterval(poll);
    this.#polls.clear();
  }

  /** Hand unstarted messages back to their queues at once (see handBackUnstarted). */
  handBack(leases: readonly Lease[], reason: string): void {
    this.#activity.track(this.handBackNow(leases, reason));
  }

  /** As handBack, for a caller that waits for it. */
  handBackNow(leases: readonly Lease[], reason: string): Promise<void> {
    return handBackUnstarted(this.#ctx, leases, reason, (lease) => describeLease(this.#ctx.config.jobs, lease));
  }

  /**
   * Keep a waiting message in the buffer. For a permit of its tenant: until one frees here (the
   * longest waiting starts) or, for one freed on another worker, the tenant's next poll: one
   * message per tenant asks again every `retryMs`, however many wait. For its rate slot: until the
   * slot's time.
   */
  async #wait(lease: Lease, until: WaitUntil): Promise<void> {
    if (this.#ctx.stop.signal.aborted || lease.lost) {
      await this.handBackWaiting(lease, 'worker is stopping');
      return;
    }
    if ('at' in until) {
      this.#scheduler.wait(lease, undefined, until.at);
      this.#wakeAt(until.at);
      return;
    }
    const tenant = until.permitOf;
    this.#scheduler.wait(lease, tenant, Number.POSITIVE_INFINITY);
    if (this.#polls.has(tenant)) return;
    const poll = setInterval(() => {
      if (this.#ctx.stop.signal.aborted || !this.#scheduler.permitFreed(tenant)) {
        clearInterval(poll);
        this.#polls.delete(tenant);
        return;
      }
      this.#wake();
    }, until.retryMs);
    poll.unref();
    this.#polls.set(tenant, poll);
  }

  /**
   * A message that was to wait here and will not (stopping, lost, an error): handed back (a lost one
   * is only let go), and on FIFO its group's buffered messages go back behind it.
   */
  async handBackWaiting(lease: Lease, reason: string): Promise<void> {
    const behind = this.#scheduler.finish(lease, true);
    const why = 'an earlier message of its FIFO group comes back first';
    if (lease.lost) {
      await this.#ctx.heartbeat.stopHolding(lease);
      if (behind.length > 0) await this.handBackNow(behind, why);
      return;
    }
    await this.handBackNow([lease], reason);
    if (behind.length > 0) await this.handBackNow(behind, why);
  }

  /** Start what can start at `at` (a timer may fire a little early: it is set again for the rest). */
  #wakeAt(at: number): void {
    const left = at - Date.now();
    if (left <= 0) this.#wake();
    else setTimeout(() => this.#wakeAt(at), left).unref();
  }

  /** Put a FIFO job back at the head of its group, to start after `delayMs`. */
  async #retryLater(lease: Lease, delayMs: number): Promise<void> {
    const stop = this.#ctx.stop.signal;
    if (stop.aborted || lease.lost) {
      // Stopping: hand it back. Lost meanwhile: SQS gives it out again, so its group's buffered
      // messages must go back behind it.
      const behind = this.#scheduler.finish(lease, lease.lost);
      await this.handBackNow(
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
