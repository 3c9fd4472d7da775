import type { JobInfo } from '../../core/job-events.js';
import { sleep } from '../../core/sleep.js';
import { countChild } from '../../fan-out/count.js';
import type { StatusEnd } from '../../status/tracker.js';
import type { FateNeeds } from '../context.js';
import type { Lease } from '../hold/lease.js';

/**
 * How long settle keeps a message held (its visibility extended by the heartbeat) while the job
 * store records how it ended: longer than one store call's worst case (6 attempts of 10 s, see
 * STORE_CLIENT), so a slow store that answers in the end is waited for. Past this the count is
 * taken as failed and the message handed back, so a store that never answers cannot hold a
 * message, or a stop, for good.
 */
const STORE_HOLD_MS = 90_000;

/**
 * Record how a message ended in the job store: its state (in the background), then for a fan-out
 * child that ended for good its count in the parent, waited for at most STORE_HOLD_MS. False: the
 * count failed (or did not answer in time), so the message must come back, not be deleted. A count
 * that lands later does no harm: a child is counted once per child id.
 */
export async function recordEnd(ctx: FateNeeds, lease: Lease, info: JobInfo, end: StatusEnd): Promise<boolean> {
  const status = ctx.status;
  const tracking = lease.tracking;
  if (tracking === undefined || status === undefined) return true;
  const written = status.tracker.ended(info, tracking, end, lease.progress);
  const parentId = tracking.parentId;
  if (parentId === undefined || end.kind === 'retry') return true;
  const succeeded = end.kind === 'succeeded' || (end.kind === 'duplicate' && end.succeeded);
  const bound = new AbortController();
  const timedOut = sleep(STORE_HOLD_MS, bound.signal).then(() => false);
  try {
    const counted = written.then(() => countChild(status.fanOut, { jobId: info.jobId, parentId, succeeded, originId: tracking.originId }));
    return await Promise.race([counted, timedOut]);
  } finally {
    bound.abort();
  }
}
