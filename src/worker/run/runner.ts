import type { AnyJob } from '../../core/job.js';
import type { JobInfo } from '../../core/job-events.js';
import { NO_PROGRESS } from '../../status/progress.js';
import { trackingOf } from '../../status/tracker.js';
import type { WorkerContext } from '../context.js';
import { afterRun, type Outcome, poisoned } from '../fate/decide.js';
import { firstSentAt, originOf } from '../../core/delivery.js';
import type { Lease } from '../hold/lease.js';
import { claimFor, newToken, noWaitRoom, permitFor, rateSlotFor, type WaitRoom } from './claim.js';
import { execute } from './execute.js';
import { RunContext } from './job-context.js';
import type { GoodReading, Reading } from './reading.js';

/**
 * One message from receive to outcome: claim its job id, run its handler under the lease's
 * signal, and decide (fate/decide.ts). `read` is the message as readOnce() read it; `room`,
 * where a job at its tenant's cap or its rate limit may wait. Never throws.
 */
export async function runJob(
  ctx: WorkerContext,
  lease: Lease,
  read: Reading,
  room: WaitRoom = noWaitRoom(),
): Promise<{ info: JobInfo; outcome: Outcome }> {
  const m = lease.message;
  // A FIFO job retried here (lease.retries) was not received again: count those runs too.
  const info = lease.retries === 0 ? read.info : { ...read.info, attempt: read.info.attempt + lease.retries };
  lease.info = info;
  if (!read.ok) {
    if (ctx.status !== undefined && read.envelope !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(m));
    return { info, outcome: poisoned(read.reason, read.detail) };
  }
  if (read.job.kind !== 'sqs-jobs/job') throw new Error(`runJob() was handed the batch job "${read.job.name}"`);
  if (ctx.status !== undefined) lease.tracking = trackingOf(read.envelope, read.job.track, originOf(m));
  const token = newToken();
  const claimed = await claimFor(ctx, lease, read, token, true);
  if (claimed !== 'run') return { info, outcome: claimed };
  const permitted = await permitFor(ctx, lease, read, token, room);
  if (permitted !== 'run') return { info, outcome: permitted };
  const rated = await rateSlotFor(ctx, lease, read, room);
  if (rated !== 'run') return { info, outcome: rated };
  // Returned, not awaited: once the handler's synchronous part has run, this frame (and what it
  // holds) is gone; only the closure in start() waits, with what the decision needs.
  return start(ctx, lease, { ...read, job: read.job }, info);
}

/** Start the handler; the promise answers the outcome once it has ended. */
function start(
  ctx: WorkerContext,
  lease: Lease,
  read: GoodReading & { readonly job: AnyJob },
  info: JobInfo,
): Promise<{ info: JobInfo; outcome: Outcome }> {
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
  return execute(() => job.handle(args, jobCtx), lease, {
    timeoutMs: job.timeoutMs,
    jobName: job.name,
    graceMs: c.abortGraceMs,
  }).then((execution) => {
    if (execution.kind === 'aborted' && execution.abandoned) {
      jobCtx.log.warn(
        { graceMs: c.abortGraceMs },
        'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends',
      );
    }
    const outcome = afterRun({
      execution,
      receiveCount,
      attempt: info.attempt,
      maxReceiveCount: ctx.queueOf(m.queueUrl).maxReceiveCount,
      backoff: job.backoff,
      waitMs,
    });
    return { info, outcome };
  });
}
