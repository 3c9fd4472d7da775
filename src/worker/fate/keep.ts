import type { JobInfo } from '../../core/job-events.js';
import type { WorkerContext } from '../context.js';
import type { Lease } from '../hold/lease.js';
import type { Outcome } from './decide.js';
import { recordEnd } from './record-end.js';
import { Report } from './report.js';

/*
 * Messages kept here rather than settled: a FIFO job retried in place, and a job waiting for a
 * permit of its tenant or for its rate slot. Neither is deleted, handed back or re-sent (that is settle.ts's); their
 * claims are let go and what happened is reported.
 */

/**
 * FIFO: a failed job to be retried here, holding its group, rather than handed back (see
 * decide's retriesInPlace). The message stays held; its lock is released for the next run.
 */
export async function retryInPlace(
  ctx: WorkerContext,
  lease: Lease,
  info: JobInfo,
  outcome: Extract<Outcome, { kind: 'retry' }>,
): Promise<void> {
  const { lock } = lease.endClaims();
  if (lease.pending !== undefined) await lease.pending;
  try {
    if (lock !== undefined) await ctx.lock.release(lock.jobId, lock.token);
  } catch (error) {
    ctx.onError('unlock', error); // a JobLock should not throw; the lock then ends with its TTL
  }
  await recordEnd(ctx, lease, info, { kind: 'retry', error: outcome.error, delayMs: outcome.delayMs });
  new Report(ctx, info).failed(outcome.error, outcome.processMs, outcome.delayMs, true);
}

/**
 * A message whose tenant is at its cap, or whose job is at its rate limit, waits here (decide's
 * waitsHere): still held, its lock and permit let go (a copy of the job elsewhere may run
 * meanwhile; this one then ends as its duplicate), and no receive spent. Answers the tenant whose
 * permit it gave back, if it held one (a job waiting here for one may start).
 */
export async function letWait(
  ctx: WorkerContext,
  lease: Lease,
  info: JobInfo,
  outcome: Extract<Outcome, { kind: 'wait' }>,
  firstWait: boolean,
): Promise<string | undefined> {
  const { lock, permit } = lease.endClaims();
  if (lease.pending !== undefined) await lease.pending;
  try {
    if (lock !== undefined) await ctx.lock.release(lock.jobId, lock.token);
    // Held when it waits for its rate slot after taking its tenant's permit: given back meanwhile.
    if (permit !== undefined) await ctx.permits?.release(permit.key, permit.index, permit.token);
  } catch (error) {
    ctx.onError('unlock', error); // the ports should not throw; the claims then end with their TTL
  }
  if (firstWait) new Report(ctx, info).waiting(outcome.reason, outcome.limit);
  return permit?.key;
}
