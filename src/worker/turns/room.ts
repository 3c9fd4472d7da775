import type { JobInfo } from '../../core/job-events.js';
import type { Activity } from '../activity.js';
import type { WorkerContext } from '../context.js';
import type { Outcome, WaitUntil } from '../decide/decide.js';
import { Report } from '../fate/report.js';
import type { Lease } from '../hold/lease.js';
import type { Scheduler } from '../intake/scheduler.js';
import type { QueueState } from '../queue-state.js';
import { CapTurns } from './cap-turns.js';
import { type Room, sqsHoldEndsAt } from './turn.js';
import { pauseTag } from '../intake/waiters.js';

/** What the room needs of its worker. */
interface RoomHost {
  readonly ctx: Pick<WorkerContext, 'stop' | 'lock' | 'permits' | 'report' | 'pauses'>;
  /** Holds the waiting messages in its buffers, first of their queue, until their time or a freed permit. */
  readonly scheduler: Scheduler<QueueState>;
  readonly activity: Activity;
  /** Start what can start now: a wait is over. */
  wake(): void;
  /** A message that was to wait here and will not (stopping, lost, an error): back to its queue. */
  handBackWaiting(lease: Lease, reason: string): Promise<void>;
}

/**
 * The one place a job waits in the worker for its turn (its tenant's permit, its rate slot): held
 * (the heartbeat keeps it), its claims let go, in no handler slot, and no receive spent. Answers
 * who may wait (turn.ts asks), counts who waits (capacity.ts brakes a queue's intake by it), keeps a
 * message waiting (fate/conclude.ts hands it over), and wakes the worker when a wait is over.
 *
 * The room is twice the free room (concurrency + prefetch): a few waiting never keep other work
 * from being received; past the free room they count against the intake of the queues they came
 * from, which are then received from no faster than they leave (rather than receiving messages only
 * to re-send them), while the worker's other queues go on.
 */
export class WaitingRoom implements Room {
  readonly turns = new CapTurns();
  /** Most of one tenant waiting for a permit: the free room, the part of the room that never brakes intake. */
  readonly perTenant: number;
  readonly #host: RoomHost;
  /** Per tenant with messages waiting here for a permit: the timer that lets one ask again. */
  readonly #polls = new Map<string, NodeJS.Timeout>();
  /** Per queue, messages on their way to wait here (their claims being let go): not in the buffer yet, no longer running. */
  readonly #goingToWait = new Map<string, number>();
  /** The same, per tenant whose permit they are to wait for. */
  readonly #goingToWaitFor = new Map<string, number>();
  /** Messages on their way to wait for a pause to end: a budget of their own (admitsPaused), never braking intake. */
  #goingToPause = 0;

  /** Until when anything may be held (a Lambda invocation's deadline); a worker's holds end only at SQS's limit. */
  readonly #holdUntil: () => number;
  readonly holdsOpenEnded: boolean;

  /** `holdUntil`: a Lambda invocation's deadline; then nothing waits for a pause (holdsOpenEnded). */
  constructor(host: RoomHost, freeRoom: number, holdUntil?: () => number) {
    this.#host = host;
    this.perTenant = freeRoom;
    this.#holdUntil = holdUntil ?? (() => Number.POSITIVE_INFINITY);
    this.holdsOpenEnded = holdUntil === undefined;
    // A pause ended (resumed, or its time ran out): its messages waiting here start.
    host.ctx.pauses?.listen((board) => {
      const now = Date.now();
      if (host.scheduler.resumed((key) => !board.holds(key, now))) host.wake();
    });
  }

  holdEndsAt(lease: Lease): number {
    return Math.min(sqsHoldEndsAt(lease), this.#holdUntil());
  }

  admits(lease: Lease): boolean {
    return this.hasWaited(lease) || this.waiting() < 2 * this.perTenant;
  }

  /**
   * Paused messages have a room of their own, as large as the free room (concurrency + prefetch):
   * they never brake a queue's intake (counted() leaves them out) nor take the place of a job
   * waiting for its tenant's permit or its rate slot, however long the pause.
   */
  admitsPaused(lease: Lease): boolean {
    return this.hasWaited(lease) || this.#host.scheduler.waitingOf(undefined, true) + this.#goingToPause < this.perTenant;
  }

  hasWaited(lease: Lease): boolean {
    return this.#host.scheduler.hasWaited(lease);
  }

  /** Messages waiting here for a permit or a rate slot (not for a pause), and those on their way to: of one queue, or of all. */
  waiting(queueUrl?: string): number {
    const scheduler = this.#host.scheduler;
    if (queueUrl !== undefined)
      return scheduler.waitingOf(queueUrl) - scheduler.waitingOf(queueUrl, true) + (this.#goingToWait.get(queueUrl) ?? 0);
    let going = 0;
    for (const n of this.#goingToWait.values()) going += n;
    return scheduler.waiting - scheduler.waitingOf(undefined, true) + going;
  }

  waitingFor(tenant: string): number {
    return this.#host.scheduler.waitingFor(tenant) + (this.#goingToWaitFor.get(tenant) ?? 0);
  }

  /**
   * The messages of `queueUrl` waiting here that count against receiving from it: none within the
   * free room; past it, rounded up to a whole receive (10, or the free room when smaller), so that
   * as they leave one by one the worker receives in full batches rather than one message per call.
   */
  counted(queueUrl: string): number {
    const past = this.waiting() - this.perTenant;
    if (past <= 0) return 0;
    const batch = Math.min(10, this.perTenant);
    return Math.min(this.waiting(queueUrl), Math.ceil(past / batch) * batch);
  }

  /**
   * Keep a message waiting here (its outcome was 'wait'): its lock and permit let go (a copy of the
   * job elsewhere may run meanwhile; this one then ends as its duplicate), its first wait reported,
   * then into the buffer until its turn. Counted as waiting from now.
   */
  keep(lease: Lease, info: JobInfo, outcome: Extract<Outcome, { kind: 'wait' }>): void {
    const host = this.#host;
    const first = !this.hasWaited(lease);
    const url = lease.message.queueUrl;
    const tenant = 'permitOf' in outcome.until ? outcome.until.permitOf : undefined;
    const paused = 'resumeOf' in outcome.until;
    if (paused) this.#goingToPause++;
    else this.#goingToWait.set(url, (this.#goingToWait.get(url) ?? 0) + 1);
    if (tenant !== undefined) this.#goingToWaitFor.set(tenant, (this.#goingToWaitFor.get(tenant) ?? 0) + 1);
    const arrived = () => {
      if (paused) this.#goingToPause--;
      else this.#goingToWait.set(url, this.#goingToWait.get(url)! - 1);
      if (tenant === undefined) return;
      const left = this.#goingToWaitFor.get(tenant)! - 1;
      if (left === 0) this.#goingToWaitFor.delete(tenant);
      else this.#goingToWaitFor.set(tenant, left);
    };
    host.activity.follow(
      this.#letGo(lease, info, outcome, first).then(
        (freed) => {
          arrived();
          if (freed !== undefined) this.permitFreed(freed);
          return this.#wait(lease, outcome.until);
        },
        (error: unknown) => {
          arrived();
          host.ctx.report.onError('wait', error);
          return host.handBackWaiting(lease, 'internal error while it was to wait');
        },
      ),
    );
  }

  /** A permit of `tenant` was given back here (settle tells it before its own calls): the longest waiting job may start. */
  readonly permitFreed = (tenant: string): void => {
    if (this.#host.scheduler.permitFreed(tenant)) this.#host.wake();
  };

  /** Stop the permit polls (shutdown; safe to call twice). */
  close(): void {
    for (const poll of this.#polls.values()) clearInterval(poll);
    this.#polls.clear();
  }

  /** Let go of the claims of a message about to wait; answers the tenant whose permit it gave back, if it held one. */
  async #letGo(lease: Lease, info: JobInfo, outcome: Extract<Outcome, { kind: 'wait' }>, first: boolean): Promise<string | undefined> {
    const ctx = this.#host.ctx;
    const { lock, permit } = lease.endClaims();
    if (lease.pending !== undefined) await lease.pending;
    try {
      if (lock !== undefined) await ctx.lock.release(lock.jobId, lock.token);
      // Held when it waits for its rate slot after taking its tenant's permit: given back meanwhile.
      if (permit !== undefined) await ctx.permits?.release(permit.key, permit.index, permit.token);
    } catch (error) {
      ctx.report.onError('unlock', error); // the ports should not throw; the claims then end with their TTL
    }
    if (first) new Report(ctx.report, info).waiting(outcome.reason, outcome.limit);
    return permit?.key;
  }

  /**
   * Into the buffer until its turn. For a permit of its tenant: until one frees here (the longest
   * waiting starts) or, for one freed on another worker, the tenant's next poll: one message per
   * tenant asks again every `retryMs`, however many wait. For its rate slot: until the slot's time.
   */
  async #wait(lease: Lease, until: WaitUntil): Promise<void> {
    const { ctx, scheduler } = this.#host;
    if (ctx.stop.signal.aborted || lease.lost) {
      await this.#host.handBackWaiting(lease, 'worker is stopping');
      return;
    }
    if ('at' in until) {
      scheduler.wait(lease, undefined, until.at);
      this.#wakeAt(until.at);
      return;
    }
    if ('resumeOf' in until) {
      // Resumed while its claims were let go: it starts at once rather than wait for the next change.
      // Else until the resume, or until shortly before SQS's 12-hour hold of it ends: then its turn
      // is asked again, and a pause still in force sends it back (re-sent, a fresh receive count).
      const holds = ctx.pauses?.board.holds(until.resumeOf, Date.now()) === true;
      const holdEnds = this.holdEndsAt(lease);
      scheduler.wait(lease, pauseTag(until.resumeOf), holds ? holdEnds : 0);
      if (holds) this.#wakeAt(holdEnds);
      else this.#host.wake();
      return;
    }
    const tenant = until.permitOf;
    scheduler.wait(lease, tenant, Number.POSITIVE_INFINITY);
    if (this.#polls.has(tenant)) return;
    const poll = setInterval(() => {
      if (ctx.stop.signal.aborted || !scheduler.permitFreed(tenant)) {
        clearInterval(poll);
        this.#polls.delete(tenant);
        return;
      }
      this.#host.wake();
    }, until.retryMs);
    poll.unref();
    this.#polls.set(tenant, poll);
  }

  /** Start what can start at `at` (a timer may fire a little early: it is set again for the rest). */
  #wakeAt(at: number): void {
    const left = at - Date.now();
    if (left <= 0) this.#host.wake();
    else setTimeout(() => this.#wakeAt(at), left).unref();
  }
}
