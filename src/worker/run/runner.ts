import type { AnyJob } from '../../core/job.js';
import type { ProcessSpan } from '../../ports/tracing.js';
import type { JobInfo } from '../../core/job-events.js';
import { trackingOf } from '../../status/tracker.js';
import type { WorkerContext } from '../context.js';
import { afterRun, internalError, type Outcome, poisoned } from '../fate/decide.js';
import { toError } from '../../core/errors.js';
import { firstSentAt, originOf } from '../../core/delivery.js';
import type { Lease } from '../hold/lease.js';
import { claimFor, newToken, noWaitRoom, permitFor, rateSlotFor, type WaitRoom } from './claim.js';
import { type Execution, Watched } from './execute.js';
import { endSpan, spanFor, unrunSpan } from './span-end.js';
import { RunContext } from './job-context.js';
import { carriedBy, type GoodReading, type Reading } from './reading.js';

/** Called once per run, when it has ended, with how (runJob's answer): one function serves every run of a worker. */
export type RunEnded = (lease: Lease, info: JobInfo, outcome: Outcome) => void;

/**
 * One message from receive to outcome: claim its job id, run its handler under the lease's
 * signal, and decide (fate/decide.ts); `ended` is told the outcome. `read` is the message as
 * readOnce() read it; `room`, where a job at its tenant's cap or its rate limit may wait. The
 * promise settles once the handler has started (or the message ended without running): nothing
 * waits on it while the handler runs, so a worker holding thousands of jobs keeps no promise
 * chain per job. Written not to reject.
 */
export async function runJob(
  ctx: WorkerContext,
  lease: Lease,
  read: Reading,
  ended: RunEnded,
  room: WaitRoom = noWaitRoom(),
): Promise<void> {
  const m = lease.message;
  // A FIFO job retried here (lease.retries) was not received again: count those runs too.
  const info = lease.retries === 0 ? read.info : { ...read.info, attempt: read.info.attempt + lease.retries };
  lease.info = info;
  if (!read.ok) {
    if (ctx.status !== undefined && read.envelope !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(m));
    const outcome = poisoned(read.reason, read.detail);
    unrunSpan(ctx, info, read, m, outcome);
    ended(lease, info, outcome);
    return;
  }
  if (read.job.kind !== 'sqs-jobs/job') throw new Error(`runJob() was handed the batch job "${read.job.name}"`);
  if (ctx.status !== undefined) lease.tracking = trackingOf(read.envelope, read.job.track, originOf(m));
  const token = newToken();
  const outcome = await claimAll(ctx, lease, read, token, room);
  if (outcome !== 'run') {
    unrunSpan(ctx, info, read, m, outcome);
    ended(lease, info, outcome);
  } else start(ctx, lease, { ...read, job: read.job }, info, ended);
}

/** The job id's lock, then its tenant's permit, then its rate slot: 'run', or how the message ends instead. */
async function claimAll(ctx: WorkerContext, lease: Lease, read: GoodReading, token: string, room: WaitRoom): Promise<Outcome | 'run'> {
  const claimed = await claimFor(ctx, lease, read, token, true);
  if (claimed !== 'run') return claimed;
  const permitted = await permitFor(ctx, lease, read, token, room);
  if (permitted !== 'run') return permitted;
  return rateSlotFor(ctx, lease, read, room);
}

/** Start the handler; `ended` is told the outcome once it has ended. */
function start(ctx: WorkerContext, lease: Lease, read: GoodReading & { readonly job: AnyJob }, info: JobInfo, ended: RunEnded): void {
  const m = lease.message;
  const status = ctx.status;
  const tracking = lease.tracking;
  if (status !== undefined && tracking !== undefined) status.tracker.running(info, tracking);
  lease.progress = undefined; // this run's reporter, made if its handler reads ctx.progress
  const jobCtx = new RunContext(ctx, lease, info, read.envelope);
  const waitMs = Math.max(0, Date.now() - firstSentAt(m));
  lease.handlerStarted = true;
  ctx.emit('job:start', { ...info, waitMs });
  if (ctx.log.isLevelEnabled('debug')) jobCtx.log.debug(ctx.config.logArgs ? { args: read.args, waitMs } : { waitMs }, 'job started');
  const span = ctx.tracing === undefined ? undefined : spanFor(ctx, info, carriedBy(read, m));
  new Run(ctx, lease, read.job, read.args, jobCtx, info, waitMs, span, ended).run();
}

/**
 * A job's handler running, and what deciding its outcome needs: one object per running job (a
 * worker may hold thousands), no closure per step.
 */
class Run extends Watched<Lease> {
  constructor(
    readonly ctx: WorkerContext,
    lease: Lease,
    readonly job: AnyJob,
    readonly args: unknown,
    readonly jobCtx: RunContext,
    readonly info: JobInfo,
    readonly waitMs: number,
    readonly span: ProcessSpan | undefined,
    readonly whenEnded: RunEnded,
  ) {
    super(lease, job.timeoutMs, ctx.config.abortGraceMs);
  }

  protected call(): unknown {
    return this.span === undefined
      ? this.job.handle(this.args, this.jobCtx)
      : this.span.within(() => this.job.handle(this.args, this.jobCtx));
  }

  timeoutMessage(): string {
    return `job "${this.job.name}" timed out after ${this.timeoutMs} ms`;
  }

  protected ended(execution: Execution): void {
    const { ctx, lease, info } = this;
    const c = ctx.config;
    let outcome: Outcome;
    try {
      if (execution.kind === 'aborted' && execution.abandoned) {
        this.jobCtx.log.warn(
          { graceMs: c.abortGraceMs },
          'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends',
        );
      }
      outcome = afterRun({
        execution,
        receiveCount: lease.message.receiveCount + lease.retries,
        attempt: info.attempt,
        maxReceiveCount: ctx.queueOf(lease.message.queueUrl).maxReceiveCount,
        backoff: this.job.backoff,
        waitMs: this.waitMs,
      });
    } catch (error) {
      outcome = internalError(toError(error), c.visibilityTimeoutSeconds);
    }
    if (this.span !== undefined) endSpan(ctx, this.span, outcome);
    this.whenEnded(lease, info, outcome);
  }
}
