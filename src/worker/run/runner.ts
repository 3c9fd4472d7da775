import type { AnyJob } from '../../core/job.js';
import type { JobInfo } from '../../core/job-events.js';
import { NO_PROGRESS } from '../../status/progress.js';
import { trackingOf } from '../../status/tracker.js';
import type { WorkerContext } from '../context.js';
import { afterRun, internalError, type Outcome, poisoned } from '../fate/decide.js';
import { toError } from '../../core/errors.js';
import { firstSentAt, originOf } from '../../core/delivery.js';
import type { Lease } from '../hold/lease.js';
import { claimFor, newToken, noWaitRoom, permitFor, rateSlotFor, type WaitRoom } from './claim.js';
import { watch } from './execute.js';
import { endSpan, spanFor, unrunSpan } from './span-end.js';
import { RunContext } from './job-context.js';
import { carriedBy, type GoodReading, type Reading } from './reading.js';

/** Called once, when a run has ended, with how (runJob's answer). */
export type RunEnded = (info: JobInfo, outcome: Outcome) => void;

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
    ended(info, outcome);
    return;
  }
  if (read.job.kind !== 'sqs-jobs/job') throw new Error(`runJob() was handed the batch job "${read.job.name}"`);
  if (ctx.status !== undefined) lease.tracking = trackingOf(read.envelope, read.job.track, originOf(m));
  const token = newToken();
  const outcome = await claimAll(ctx, lease, read, token, room);
  if (outcome !== 'run') {
    unrunSpan(ctx, info, read, m, outcome);
    ended(info, outcome);
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
  const job = read.job;
  const c = ctx.config;
  const status = ctx.status;
  const tracking = lease.tracking;
  if (status !== undefined && tracking !== undefined) status.tracker.running(info, tracking);
  if (status !== undefined && tracking?.tracked) lease.progress = status.tracker.progress(info, tracking);
  const jobCtx = new RunContext(ctx, lease, info, read.envelope, lease.progress?.fn ?? NO_PROGRESS);
  const waitMs = Math.max(0, Date.now() - firstSentAt(m).getTime());
  lease.handlerStarted = true;
  ctx.emit('job:start', { ...info, waitMs });
  if (ctx.log.isLevelEnabled('debug')) jobCtx.log.debug(c.logArgs ? { args: read.args, waitMs } : { waitMs }, 'job started');
  const receiveCount = m.receiveCount + lease.retries;
  const args = read.args;
  const options = { timeoutMs: job.timeoutMs, jobName: job.name, graceMs: c.abortGraceMs };
  const span = ctx.tracing === undefined ? undefined : spanFor(ctx, info, carriedBy(read, m));
  const handle = () => job.handle(args, jobCtx);
  watch(span === undefined ? handle : () => span.within(handle), lease, options, (execution) => {
    let outcome: Outcome;
    try {
      if (execution.kind === 'aborted' && execution.abandoned) {
        jobCtx.log.warn(
          { graceMs: c.abortGraceMs },
          'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends',
        );
      }
      outcome = afterRun({
        execution,
        receiveCount,
        attempt: info.attempt,
        maxReceiveCount: ctx.queueOf(m.queueUrl).maxReceiveCount,
        backoff: job.backoff,
        waitMs,
      });
    } catch (error) {
      outcome = internalError(toError(error), c.visibilityTimeoutSeconds);
    }
    if (span !== undefined) endSpan(ctx, span, outcome);
    ended(info, outcome);
  });
}
