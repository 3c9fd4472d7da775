import type { AnyJob } from '../core/job.js';
import type { JobInfo } from '../core/job-events.js';
import { toError } from '../core/errors.js';
import { firstSentAt, originOf } from '../core/delivery.js';
import type { ProcessSpan } from '../ports/tracing.js';
import { trackingOf } from '../status/tracker.js';
import type { Activity } from './activity.js';
import type { WorkerContext } from './context.js';
import type { Fate } from './fate/conclude.js';
import { afterRun, cutShort, type Execution, internalError, type Outcome, poisoned } from './decide/decide.js';
import { heldFactsOf } from './hold/held-facts.js';
import { abortedWith, type Lease } from './hold/lease.js';
import { claimFor, newToken } from './run/claim.js';
import { Watched } from './run/execute.js';
import { RunContext } from './run/job-context.js';
import { carriedBy, type GoodReading, type Reading } from './reading.js';
import { endSpan, spanFor, unrunSpan } from './run/span-end.js';
import { type Room, turnFor } from './turns/turn.js';

/** What a delivery needs of its worker: the context, where it may wait, its handler slot, and the way to its end. */
export interface DeliveryHost {
  readonly ctx: WorkerContext;
  /** Where a job at its tenant's cap or its rate limit may wait. */
  readonly room: Room;
  /** The handler slots: a delivery holds one from its start until its outcome is known. */
  readonly activity: Activity;
  /** Where every outcome goes: settled, or kept here (waiting for its turn; a FIFO job retried in place). */
  readonly fate: Pick<Fate, 'conclude' | 'handBackWaiting'>;
  /** Start what can start now (a slot is free). */
  dispatch(): void;
}

/**
 * One held message's walk, in order: read (done by dispatch, which needs to know a batch job's
 * message) → claim its job id → its turn (its tenant's permit, its rate slot) → run its handler →
 * decide → conclude (settle, or keep it waiting). One object per message from its start to its
 * outcome, extending the run it watches (execute.ts), so a worker holding thousands of jobs keeps
 * no promise chain or closure per job. The handler slot is taken at start and freed the moment the
 * outcome is known; the SQS calls that settle it go on in the background.
 */
export class Delivery extends Watched<Lease> {
  readonly #info: JobInfo;
  #job: AnyJob | undefined;
  #args: unknown;
  #jobCtx: RunContext | undefined;
  #waitMs = 0;
  #span: ProcessSpan | undefined;

  /** Start delivering `lease`, read as `read`, in a handler slot of its own. */
  static start(host: DeliveryHost, lease: Lease, read: Reading): void {
    // A job that waited (for its tenant's permit, its rate slot) until its hold ran out (SQS's 12-hour limit) goes back unstarted.
    if (host.room.hasWaited(lease) && lease.abortReason !== undefined) {
      host.activity.follow(host.fate.handBackWaiting(lease, 'held too long waiting for its turn'));
      return;
    }
    host.activity.started(lease);
    const delivery = new Delivery(host, lease, read);
    delivery.#walk(read).catch((error: unknown) => delivery.#failed(error));
  }

  private constructor(
    readonly host: DeliveryHost,
    lease: Lease,
    read: Reading,
  ) {
    super(lease, read.ok && read.job.kind === 'sqs-jobs/job' ? read.job.timeoutMs : undefined, host.ctx.config.abortGraceMs);
    // A FIFO job retried here (lease.retries) was not received again: count those runs too.
    this.#info = lease.retries === 0 ? read.info : { ...read.info, attempt: read.info.attempt + lease.retries };
    lease.info = this.#info;
  }

  /** Read → claim → turn, then the handler's start: the promise settles there (nothing waits on a running handler). */
  async #walk(read: Reading): Promise<void> {
    const { ctx } = this.host;
    const lease = this.lease;
    const m = lease.message;
    if (!read.ok) {
      if (ctx.status !== undefined && read.envelope !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(m));
      this.#unrun(read, poisoned(read.reason, read.detail));
      return;
    }
    if (read.job.kind !== 'sqs-jobs/job') throw new Error(`a delivery was handed the batch job "${read.job.name}"`);
    if (ctx.status !== undefined) lease.tracking = trackingOf(read.envelope, read.job.track, originOf(m));
    const token = newToken();
    // The job id's lock, then its turn (its tenant's permit, its rate slot): each 'run', or how the message ends instead.
    let next = await claimFor(ctx, lease, read, token, true);
    if (next === 'run') next = await turnFor(ctx, lease, read, token, this.host.room);
    // A Lambda invocation's deadline came while it was claimed or waited for its turn: it does not start.
    if (next === 'run' && abortedWith(lease, 'DEADLINE'))
      next = cutShort(lease.abortReason!.message, heldFactsOf(ctx, lease), { ran: false, abandoned: false });
    if (next !== 'run') this.#unrun(read, next);
    else this.#begin(read, read.job);
  }

  /** The handler starts: its status, context, event and span, then the watched run. */
  #begin(read: GoodReading, job: AnyJob): void {
    const { ctx } = this.host;
    const lease = this.lease;
    const info = this.#info;
    const tracking = lease.tracking;
    if (ctx.status !== undefined && tracking !== undefined) ctx.status.tracker.running(info, tracking);
    lease.progress = undefined; // this run's reporter, made if its handler reads ctx.progress
    this.#job = job;
    this.#args = read.args;
    this.#jobCtx = new RunContext(ctx, lease, info, read.envelope);
    this.#waitMs = Math.max(0, Date.now() - firstSentAt(lease.message));
    lease.handlerStarted = true;
    ctx.report.emit('job:start', { ...info, waitMs: this.#waitMs });
    if (ctx.report.log.isLevelEnabled('debug'))
      this.#jobCtx.log.debug(ctx.config.logArgs ? { args: read.args, waitMs: this.#waitMs } : { waitMs: this.#waitMs }, 'job started');
    this.#span = ctx.tracing === undefined ? undefined : spanFor(ctx, info, carriedBy(read, lease.message));
    this.run();
  }

  protected call(): unknown {
    const job = this.#job!;
    return this.#span === undefined
      ? job.handle(this.#args, this.#jobCtx!)
      : this.#span.within(() => job.handle(this.#args, this.#jobCtx!));
  }

  timeoutMessage(): string {
    return `job "${this.#job!.name}" timed out after ${this.timeoutMs} ms`;
  }

  /** The handler's run ended: decide its outcome, end its span, then conclude. */
  protected ended(execution: Execution): void {
    const { ctx } = this.host;
    const lease = this.lease;
    const c = ctx.config;
    let outcome: Outcome;
    try {
      if (execution.kind === 'aborted' && execution.abandoned) {
        this.#jobCtx!.log.warn(
          { graceMs: c.abortGraceMs },
          'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends',
        );
      }
      outcome = afterRun({
        execution,
        receiveCount: lease.message.receiveCount + lease.retries,
        attempt: this.#info.attempt,
        maxReceiveCount: ctx.queueOf(lease.message.queueUrl).maxReceiveCount,
        backoff: this.#job!.backoff,
        waitMs: this.#waitMs,
        // Read only by a Lambda invocation's deadline rule: not gathered for every run.
        ...(abortedWith(lease, 'DEADLINE') ? { held: heldFactsOf(ctx, lease) } : {}),
      });
    } catch (error) {
      outcome = internalError(toError(error), c.visibilityTimeoutSeconds);
    }
    if (this.#span !== undefined) endSpan(ctx, this.#span, outcome);
    this.#conclude(outcome);
  }

  /** Ended without running its handler (poison, a duplicate, deferred, waiting for its turn): its span says so. */
  #unrun(read: Reading, outcome: Outcome): void {
    unrunSpan(this.host.ctx, this.#info, read, this.lease.message, outcome);
    this.#conclude(outcome);
  }

  /** The outcome is known: the slot frees at once, the message goes to its end (fate/), and what can start starts. */
  #conclude(outcome: Outcome): void {
    const { host } = this;
    try {
      host.activity.ended(this.lease);
      host.fate.conclude(this.lease, this.#info, outcome);
    } catch (error) {
      host.ctx.report.onError('run', error);
    }
    host.dispatch();
  }

  /** The walk is written not to throw; if it does before the outcome is known, hand the message back rather than lose track of it. */
  #failed(error: unknown): void {
    const { host } = this;
    host.ctx.report.onError('run', error);
    if (host.activity.running.has(this.lease)) this.#conclude(internalError(toError(error), host.ctx.config.visibilityTimeoutSeconds));
  }
}
