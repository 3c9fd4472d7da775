import type { JobInfo } from '../../core/job-events.js';
import { sleep } from '../../core/sleep.js';
import type { StatusEnd } from '../../status/tracker.js';
import type { WorkerContext } from '../context.js';
import type { Lease } from '../hold/lease.js';

/**
 * How long settle keeps a message held (its visibility extended by the heartbeat) while the job
 * store records how it ended: longer than one store call's worst case (6 attempts of 10 s, see
 * STORE_CLIENT), so a slow store that answers in the end is waited for. Past this the count is
 * taken as failed and the message handed back, so a store that never answers cannot hold a
 * message, or a stop, for good.
 */
export const STORE_HOLD_MS = 90_000;

/**
 * Record how a message ended in the job store, waiting at most STORE_HOLD_MS. False: a fan-out
 * child's count failed (or did not answer in time), so its message must come back, not be deleted.
 * A count that lands later does no harm: a child is counted once per child id.
 */
export async function recordEnd(ctx: WorkerContext, lease: Lease, info: JobInfo, end: StatusEnd): Promise<boolean> {
  const tracker = ctx.status?.tracker;
  if (lease.tracking === undefined || tracker === undefined) return true;
  const bound = new AbortController();
  const timedOut = sleep(STORE_HOLD_MS, bound.signal).then(() => false);
  try {
    return await Promise.race([tracker.ended(info, lease.tracking, end, lease.progress), timedOut]);
  } finally {
    bound.abort();
  }
}
