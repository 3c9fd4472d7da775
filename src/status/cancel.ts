import { ConfigError, SqsJobsError } from '../core/errors.js';
import type { JobLock } from '../ports/lock.js';
import { ENDED_STATES, type JobState, type JobStatus, type StatusStore } from '../ports/status-store.js';
import type { TimedJobStore } from '../ports/timed-jobs.js';
import { CANCEL_MARK_SECONDS } from './stored-cancels.js';

/** What a cancel did. */
export type CancelResult =
  /**
   * Cancelled (or it was already): a job kept until its time is taken out of the job store; a waiting job is deleted without running when its message is
   * received; a running one's `ctx.signal` fires with CANCELLED at its worker's next heartbeat; a
   * fan-out parent's children not yet run are cancelled. `status`: the job's record after the cancel.
   */
  | { readonly outcome: 'cancelled'; readonly status: JobStatus }
  /** It had ended already (`completed` or `failed`): nothing was changed. */
  | { readonly outcome: 'ended'; readonly status: JobStatus }
  /** The job store has no record of it (never tracked, or its record expired). */
  | { readonly outcome: 'not-found'; readonly jobId: string };

interface CancelPorts {
  /** The job store; with `timed`, where jobs wait for their time (a cancel takes one out, for good). */
  readonly store: StatusStore & { readonly timed?: TimedJobStore | undefined };
  /** Where workers read the cancel (the dedupe lock's memcached). */
  readonly lock: JobLock;
}

/** A store that keeps moving under the cancel (a new attempt each read) is read this many times. */
const TRIES = 3;

/**
 * Cancel a tracked job. The job store says whether it can be cancelled (it has a record, and has
 * not ended); the mark goes to memcached first, where every worker looks for it (when it claims
 * the job or one of its children, and at each heartbeat while it runs), then the record is moved
 * to `cancelled`. A job that completes anyway (its handler returned before it saw the signal)
 * reads `completed`: the store's order lets the truth win.
 *
 * Throws when the store cannot be read (STORE_UNREACHABLE) or memcached refuses the mark
 * (LOCK_UNREACHABLE): nothing was cancelled then, and the call can be made again. Once the mark is
 * in, the job is cancelled whatever the store then answers (the workers record it as they end it).
 * A job that ends in the moment between the read and the mark keeps the mark: a later copy of it
 * (a DLQ replay within 14 days) is not run either. The record is the mark that lasts: workers read
 * it when memcached may have forgotten theirs (stored-cancels.ts).
 */
export async function cancelWith(ports: CancelPorts, jobId: string): Promise<CancelResult> {
  const { store, lock } = ports;
  if (lock.cancel === undefined) {
    throw new ConfigError('cancel needs the dedupe lock workers read (memcached: SQS_JOBS_MEMCACHED, or the memcached option)');
  }
  let status = await read(store, jobId);
  const taken = await takeKept(ports, jobId, status);
  if (taken !== undefined) return { outcome: 'cancelled', status: taken };
  for (let tries = 1; ; tries++) {
    if (status === undefined) return { outcome: 'not-found', jobId };
    if (status.state === 'cancelled') return { outcome: 'cancelled', status };
    if (status.state === 'completed' || status.state === 'failed') return { outcome: 'ended', status };
    if (!(await lock.cancel(jobId, CANCEL_MARK_SECONDS))) {
      throw new SqsJobsError('LOCK_UNREACHABLE', `could not cancel job ${jobId}: memcached did not take the cancel mark`);
    }
    // A fan-out parent whose own run has ended keeps its record: its children read the mark.
    if (status.state === 'waiting-children') return { outcome: 'cancelled', status };
    const seen = status;
    const recorded = await store
      .transition({
        jobId,
        jobName: seen.jobName,
        state: 'cancelled',
        attempt: seen.attempt,
        at: new Date(),
        reason: 'cancelled by request',
        ...(seen.enqueuedAt === undefined ? {} : { enqueuedAt: seen.enqueuedAt }),
        ...(seen.parentId === undefined ? {} : { parentId: seen.parentId }),
        ...(seen.tenant === undefined ? {} : { tenant: seen.tenant }),
      })
      .then(() => store.get(jobId))
      .catch(() => 'unanswered' as const);
    // The mark is in: the store not answering now does not undo the cancel.
    if (recorded === 'unanswered') return { outcome: 'cancelled', status: seen };
    // Not applied: it moved on meanwhile (a later attempt began, or it ended). Look again.
    status = recorded ?? seen;
    // Still running after the last try: the mark stands, and its worker ends it as cancelled.
    if (tries >= TRIES && !ENDED_STATES.has(status.state as JobState)) return { outcome: 'cancelled', status };
  }
}

/**
 * A job kept in the job store until its time is taken out of it: never sent, however far ahead it
 * was. Marked in memcached first, as any cancel: a tick that sent it and died before removing it
 * (its claim lapsed) leaves a message the mark stops, and the same job id enqueued again is not
 * run either. Undefined when it is not kept, or is being sent this moment (the mark then meets its
 * message). Its record says cancelled (made for a job enqueued without `track`).
 */
async function takeKept(ports: CancelPorts, jobId: string, status: JobStatus | undefined): Promise<JobStatus | undefined> {
  const { store, lock } = ports;
  if (store.timed === undefined || (status !== undefined && status.state !== 'scheduled' && status.state !== 'waiting')) return undefined;
  const timed = store.timed;
  const kept = await unreachable(() => timed.getTimed(jobId), jobId);
  if (kept === undefined) return undefined;
  if (!(await lock.cancel!(jobId, CANCEL_MARK_SECONDS)))
    throw new SqsJobsError('LOCK_UNREACHABLE', `could not cancel job ${jobId}: memcached did not take the cancel mark`);
  if (!(await unreachable(() => timed.removeTimed(jobId, { nowS: Math.floor(Date.now() / 1000) }), jobId))) return undefined;
  const at = new Date();
  const cancelled = { jobId, jobName: kept.jobName, state: 'cancelled' as const, attempt: 0, reason: 'cancelled before its time' };
  const tenant = status?.tenant === undefined ? {} : { tenant: status.tenant };
  await store.transition({ ...cancelled, ...tenant, at, enqueuedAt: kept.enqueuedAt }).catch(() => {});
  return (await store.get(jobId).catch(() => undefined)) ?? { ...cancelled, enqueuedAt: kept.enqueuedAt, updatedAt: at.toISOString() };
}

/** A store call whose failure is STORE_UNREACHABLE (nothing was cancelled: the call can be made again). */
async function unreachable<T>(call: () => Promise<T>, jobId: string): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new SqsJobsError('STORE_UNREACHABLE', `could not cancel job ${jobId} in the job store: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

async function read(store: StatusStore, jobId: string): Promise<JobStatus | undefined> {
  try {
    return await store.get(jobId);
  } catch (error) {
    throw new SqsJobsError('STORE_UNREACHABLE', `could not read job ${jobId} from the job store: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
