import { deadLetterMessage } from '../../dead-letter.js';
import { toError } from '../../errors.js';
import type { JobInfo } from '../../job-events.js';
import { sleep } from '../../sleep.js';
import type { StatusEnd } from '../../status/tracker.js';
import { visibilitySeconds } from './backoff.js';
import type { Outcome } from './decide.js';
import { defer, handBack } from './hand-back.js';
import type { Lease } from '../hold/lease.js';
import { jobLogger } from '../run/job-logger.js';
import type { SettleDeps } from './settle-deps.js';

/** A fan-out child whose count failed comes back this soon (within the dead-letter marker's life). */
const COUNT_RETRY_SECONDS = 5;

/**
 * How long settle keeps a message held (its visibility extended by the heartbeat) while the job
 * store records how it ended: longer than one store call's worst case (6 attempts of 10 s, see
 * STORE_CLIENT), so a slow store that answers in the end is waited for. Past this the count is
 * taken as failed and the message handed back, so a store that never answers cannot hold a
 * message, or a stop, for good.
 */
const STORE_HOLD_MS = 90_000;

/**
 * Record how a message ended in the job store, waiting at most STORE_HOLD_MS. False: a fan-out
 * child's count failed (or did not answer in time), so its message must come back, not be deleted.
 * A count that lands later does no harm: a child is counted once per child id.
 */
async function recordEnd(deps: SettleDeps, lease: Lease, info: JobInfo, end: StatusEnd): Promise<boolean> {
  if (lease.tracking === undefined || deps.status === undefined) return true;
  const bound = new AbortController();
  const timedOut = sleep(STORE_HOLD_MS, bound.signal).then(() => false);
  try {
    return await Promise.race([deps.status.ended(info, lease.tracking, end, lease.progress), timedOut]);
  } finally {
    bound.abort();
  }
}

/**
 * The one place where a received message ends. Every outcome maps to exactly one of:
 * delete (success, duplicate), handed back (visible again after a delay, or re-sent when it has no
 * receive left), moved to the DLQ (send there, then delete), or left alone (lease lost: someone
 * else holds it).
 *
 * The message stays held (the heartbeat keeps extending its visibility) until the moment settle
 * acts on it: a job store slower than the visibility timeout must not let it come back and spend
 * receives while its end is being recorded. Only the dedupe lock and the tenant's permit stop being
 * extended at once.
 */
export async function settle(deps: SettleDeps, lease: Lease, info: JobInfo, outcome: Outcome): Promise<void> {
  try {
    await carryOut(deps, lease, info, outcome);
  } finally {
    // carryOut lets go of the message before it acts; this is for one that threw before it could.
    await deps.heartbeat.untrack(lease);
  }
}

/**
 * Stop holding the message and let an extension in flight land, so nothing the heartbeat sends can
 * undo the act that follows. False: the lease was lost meanwhile (another consumer may hold it).
 */
async function letGo(deps: SettleDeps, lease: Lease): Promise<boolean> {
  await deps.heartbeat.untrack(lease);
  return !lease.lost;
}

async function carryOut(deps: SettleDeps, lease: Lease, info: JobInfo, outcome: Outcome): Promise<void> {
  const lock = lease.lock;
  lease.lock = undefined;
  const slot = lease.slot;
  lease.slot = undefined;
  // From here the heartbeat extends the message only. Let an extension in flight land first: one
  // that touches the lock after it is released below would read it as taken by someone else.
  await lease.pending;
  // That extension may have found the lease lost: then only unlock, never act on a message another
  // consumer holds now (success and duplicates still end as decided).
  if (lease.lost && outcome.kind !== 'succeeded' && outcome.kind !== 'duplicate' && outcome.kind !== 'lost') {
    outcome = {
      kind: 'lost',
      reason: 'the lease was lost while the outcome was being settled',
      abandoned: 'abandoned' in outcome && outcome.abandoned,
    };
  }
  const m = lease.message;
  const log = jobLogger(deps.logger, info);
  const unlock = async (abandoned = false) => {
    // An abandoned handler may still be running: keep its lock until the TTL ends.
    if (lock !== undefined && !abandoned) await deps.lock.release(lock.jobId, lock.token);
  };
  // Its tenant's slot is free again (kept, like the lock, while an abandoned handler may still run).
  if (slot !== undefined && !('abandoned' in outcome && outcome.abandoned)) await deps.slots?.release(slot.key, slot.index, slot.token);
  /** Hand back, unless the lease was lost while the message was held (then it is someone else's). */
  const giveBack = async (seconds: number, reason: string, deadLettered = false) => {
    if (await letGo(deps, lease)) await handBack(deps, lease, info, seconds, reason, deadLettered);
  };
  /** Delete: even after a lost lease (a stale handle fails harmlessly, and the copy ends as a duplicate). */
  const remove = async () => {
    await letGo(deps, lease);
    await deps.acks.delete(m);
  };

  switch (outcome.kind) {
    case 'succeeded': {
      if (lock !== undefined) await deps.lock.complete(lock.jobId, lock.token, deps.completedTtlSeconds);
      deps.emit('job:succeeded', { ...info, waitMs: outcome.waitMs, processMs: outcome.processMs });
      if (deps.logger.isLevelEnabled('debug')) log().debug({ processMs: outcome.processMs, waitMs: outcome.waitMs }, 'job succeeded');
      if (!(await recordEnd(deps, lease, info, { kind: 'succeeded', result: outcome.result }))) {
        await giveBack(COUNT_RETRY_SECONDS, 'its fan-out count failed');
        return;
      }
      await remove();
      return;
    }
    case 'duplicate': {
      deps.emit('job:duplicate', { ...info, state: outcome.state });
      log().info({ state: outcome.state }, DUPLICATE_LOG[outcome.state]);
      // A fan-out child that ended before: counted again (once per child id), in case its count was lost.
      const ended = outcome.state !== 'running';
      if (ended && !(await recordEnd(deps, lease, info, { kind: 'duplicate', succeeded: outcome.state === 'completed' }))) {
        await giveBack(COUNT_RETRY_SECONDS, 'its fan-out count failed');
        return;
      }
      await remove();
      return;
    }
    case 'retry': {
      await unlock(outcome.abandoned);
      await recordEnd(deps, lease, info, { kind: 'retry', error: outcome.error, delayMs: outcome.delayMs });
      const seconds = visibilitySeconds(outcome.delayMs, Date.now() - lease.receivedAt);
      deps.emit('job:failed', { ...info, error: outcome.error, processMs: outcome.processMs, retryDelayMs: seconds * 1000 });
      log().warn({ err: outcome.error, retryInSeconds: seconds }, 'job failed; it will be retried');
      await giveBack(seconds, 'retry');
      return;
    }
    case 'release': {
      await unlock(outcome.abandoned);
      deps.emit('job:released', { ...info, reason: outcome.reason });
      await giveBack(outcome.delaySeconds, outcome.reason);
      return;
    }
    case 'lost': {
      await letGo(deps, lease);
      await unlock(outcome.abandoned);
      return;
    }
    case 'defer': {
      await unlock();
      if (await letGo(deps, lease)) await defer(deps, lease, info, outcome.delaySeconds, outcome.reason);
      return;
    }
    case 'dead-letter': {
      if (outcome.error !== undefined) {
        deps.emit('job:failed', { ...info, error: outcome.error, processMs: outcome.processMs ?? 0, retryDelayMs: undefined });
      }
      const dlq = deps.deadLetterQueueUrl(m.queueUrl);
      // Let go of the job id before the DLQ send. From the moment the DLQ holds the job, a replay
      // may send a copy of it; that copy must find the job free and run. Were the lock still held,
      // the copy would read "running under another message" and be deleted as redundant, while
      // this message, the only other carrier, is about to be deleted too: the job would be lost.
      await unlock();
      try {
        await deps.sqs.send(dlq, deadLetterMessage(m, outcome.reason, outcome.detail));
      } catch (error) {
        // Not moved: hand it back to come again (re-sent if it has no receive left, so SQS's
        // redrive cannot take it without the reason).
        const e = toError(error);
        log().error({ err: e, reason: outcome.reason }, 'could not send the message to the DLQ; it stays in the queue');
        deps.onError('dead-letter', new Error(`could not dead-letter message ${m.messageId} to ${dlq}: ${e.message}`, { cause: e }));
        await giveBack(deps.visibilityTimeoutSeconds, 'the DLQ send failed');
        return;
      }
      // Now in the DLQ. Remember this message id for a while: if the delete below fails and the
      // message comes back, it is deleted as a leftover instead of run again. (Marked only after
      // the send: a marker for a send that failed would delete the message that still carries the
      // job.) The job id is free, so a replay from the DLQ (a new message) runs at once. The mark
      // lives as long as a completed job's: this message may come back many times while the job
      // store is slow or down (each time its count fails), and must never run again.
      await deps.lock.markDeadLettered(m.messageId, deps.completedTtlSeconds);
      deps.emit('job:dead-lettered', { ...info, reason: outcome.reason, detail: outcome.detail });
      log().error({ reason: outcome.reason, detail: outcome.detail }, 'message moved to the dead-letter queue');
      if (!(await recordEnd(deps, lease, info, { kind: 'dead-letter', reason: outcome.reason, detail: outcome.detail }))) {
        // Comes back within the marker's life (which names this message id): deleted as a leftover,
        // and counted then. On its last receive it is re-sent marked as dead-lettered instead, since
        // SQS would redrive it away, and a plain copy would be a new message that runs again.
        await giveBack(COUNT_RETRY_SECONDS, 'its fan-out count failed', true);
        return;
      }
      await remove();
      return;
    }
  }
}

/**
 * FIFO: a failed job to be retried here, holding its group, rather than handed back (see
 * Scheduler.retryLater). The message stays held; its lock is released for the next run.
 */
export async function retryInPlace(
  deps: SettleDeps,
  lease: Lease,
  info: JobInfo,
  outcome: Extract<Outcome, { kind: 'retry' }>,
): Promise<void> {
  const lock = lease.lock;
  lease.lock = undefined;
  await lease.pending; // an extension in flight must not read the lock as taken by someone else
  try {
    if (lock !== undefined) await deps.lock.release(lock.jobId, lock.token);
  } catch (error) {
    deps.onError('unlock', error); // a JobLock should not throw; the lock then ends with its TTL
  }
  await recordEnd(deps, lease, info, { kind: 'retry', error: outcome.error, delayMs: outcome.delayMs });
  lease.retries++;
  lease.newRun();
  deps.emit('job:failed', { ...info, error: outcome.error, processMs: outcome.processMs, retryDelayMs: outcome.delayMs });
  jobLogger(deps.logger, info)().warn(
    { err: outcome.error, retryInMs: outcome.delayMs },
    'job failed; it will be retried here, its FIFO group waiting for it',
  );
}

const DUPLICATE_LOG = {
  completed: 'job id already completed: deleting the duplicate without running it',
  'dead-lettered': 'this message is already in the dead-letter queue (its delete had failed): deleting the leftover',
  running: 'job id is running under another message: deleting this copy (the other message carries the job)',
} as const;
