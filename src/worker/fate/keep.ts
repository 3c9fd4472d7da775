import type { JobInfo } from '../../core/job-events.js';
import type { FateNeeds } from '../context.js';
import type { Lease } from '../hold/lease.js';
import type { Outcome } from '../decide/decide.js';
import { recordEnd } from './record-end.js';
import { Report } from './report.js';

/*
 * A FIFO job kept here rather than settled, retried in place: not deleted, handed back or re-sent
 * (that is settle.ts's); its claims are let go and what happened is reported. (A job waiting for
 * its turn is kept by the waiting room, turns/room.ts.)
 */

/**
 * FIFO: a failed job to be retried here, holding its group, rather than handed back (see
 * decide's retriesInPlace). The message stays held; its lock is released for the next run.
 */
export async function retryInPlace(
  ctx: FateNeeds,
  lease: Lease,
  info: JobInfo,
  outcome: Extract<Outcome, { kind: 'retry' }>,
): Promise<void> {
  const { lock } = lease.endClaims();
  if (lease.pending !== undefined) await lease.pending;
  try {
    if (lock !== undefined) await ctx.lock.release(lock.jobId, lock.token);
  } catch (error) {
    ctx.report.onError('unlock', error); // a JobLock should not throw; the lock then ends with its TTL
  }
  await recordEnd(ctx, lease, info, { kind: 'retry', error: outcome.error, delayMs: outcome.delayMs });
  new Report(ctx.report, info).failed(outcome.error, outcome.processMs, outcome.delayMs, true);
}
