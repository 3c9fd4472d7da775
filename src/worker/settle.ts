import type { Logger } from 'pino';
import type { JobLock } from '../dedupe/lock.js';
import { toError } from '../errors.js';
import type { DeleteBatcher } from './acks.js';
import { visibilitySeconds } from './backoff.js';
import { deadLetterMessage } from './dead-letter.js';
import type { JobInfo, WorkerEvents } from './events.js';
import type { Heartbeat, Lease } from './heartbeat.js';
import { jobLogger, type Outcome } from './run-job.js';
import type { QueuePort } from './sqs-port.js';

export interface SettleDeps {
  readonly sqs: QueuePort;
  readonly acks: DeleteBatcher;
  readonly heartbeat: Heartbeat;
  readonly lock: JobLock;
  readonly completedTtlSeconds: number;
  readonly lockTtlSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly deadLetterQueueUrl: (queueUrl: string) => string;
  readonly logger: Logger;
  readonly emit: <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
}

/**
 * The one place where a received message ends. Every outcome maps to exactly one of:
 * delete (success, completed duplicate), visible again after a delay (retry, busy, release),
 * moved to the DLQ (send there, then delete), or left alone (lease lost: someone else holds it).
 */
export async function settle(deps: SettleDeps, lease: Lease, info: JobInfo, outcome: Outcome): Promise<void> {
  // Stop heartbeating first and let an extension in flight land, so it cannot undo what follows.
  await deps.heartbeat.release(lease);
  const lock = lease.lock;
  lease.lock = undefined;
  const m = lease.message;
  const log = jobLogger(deps.logger, info);

  const setVisibility = async (seconds: number): Promise<void> => {
    try {
      const [failure] = await deps.sqs.changeVisibilityBatch(m.queueUrl, [{ id: '0', receiptHandle: m.receiptHandle, visibilityTimeout: seconds }]);
      if (failure !== undefined) log().warn({ code: failure.code, detail: failure.message }, 'could not change visibility; the message returns when its current visibility timeout ends');
    } catch (error) {
      log().warn({ err: error }, 'could not change visibility; the message returns when its current visibility timeout ends');
    }
  };
  const releaseLock = async (abandoned = false) => {
    // An abandoned handler may still be running: keep its lock until the TTL ends.
    if (lock !== undefined && !abandoned) await deps.lock.release(lock.jobId, lock.token);
  };

  switch (outcome.kind) {
    case 'succeeded': {
      if (lock !== undefined) await deps.lock.complete(lock.jobId, lock.token, deps.completedTtlSeconds);
      deps.emit('job:succeeded', { ...info, waitMs: outcome.waitMs, processMs: outcome.processMs });
      if (deps.logger.isLevelEnabled('debug')) log().debug({ processMs: outcome.processMs, waitMs: outcome.waitMs }, 'job succeeded');
      await deps.acks.delete(m);
      return;
    }
    case 'duplicate': {
      deps.emit('job:duplicate', { ...info, state: 'completed' });
      log().info('job id already completed: deleting the duplicate without running it');
      await deps.acks.delete(m);
      return;
    }
    case 'busy': {
      deps.emit('job:duplicate', { ...info, state: 'running' });
      log().info('job id is running elsewhere: leaving the message for later');
      await setVisibility(visibilitySeconds(deps.visibilityTimeoutSeconds * 1000, Date.now() - lease.receivedAt));
      return;
    }
    case 'retry': {
      await releaseLock(outcome.abandoned);
      const seconds = visibilitySeconds(outcome.delayMs, Date.now() - lease.receivedAt);
      deps.emit('job:failed', { ...info, error: outcome.error, processMs: outcome.processMs, retryDelayMs: seconds * 1000 });
      log().warn({ err: outcome.error, retryInSeconds: seconds }, 'job failed; it will be retried');
      await setVisibility(seconds);
      return;
    }
    case 'release': {
      await releaseLock(outcome.abandoned);
      deps.emit('job:released', { ...info, reason: outcome.reason });
      await setVisibility(outcome.delaySeconds);
      return;
    }
    case 'lost': {
      await releaseLock();
      return;
    }
    case 'dead-letter': {
      if (outcome.error !== undefined) {
        deps.emit('job:failed', { ...info, error: outcome.error, processMs: outcome.processMs ?? 0, retryDelayMs: undefined });
      }
      const dlq = deps.deadLetterQueueUrl(m.queueUrl);
      try {
        await deps.sqs.send(dlq, deadLetterMessage(m, outcome.reason, outcome.detail));
      } catch (error) {
        // Not moved: leave it to come back, and to the queue's RedrivePolicy if this keeps failing.
        await releaseLock();
        const e = toError(error);
        log().error({ err: e, reason: outcome.reason }, 'could not send the message to the DLQ; it stays in the queue');
        deps.emit('error', new Error(`could not dead-letter message ${m.messageId} to ${dlq}: ${e.message}`, { cause: e }));
        await setVisibility(visibilitySeconds(deps.visibilityTimeoutSeconds * 1000, Date.now() - lease.receivedAt));
        return;
      }
      // Now in the DLQ. Mark the job id for a short while rather than release it: if the delete
      // below fails and the message comes back, it is deleted as a duplicate instead of run again.
      if (lock !== undefined) await deps.lock.complete(lock.jobId, lock.token, deps.lockTtlSeconds, 'dead');
      deps.emit('job:dead-lettered', { ...info, reason: outcome.reason, detail: outcome.detail });
      log().error({ reason: outcome.reason, detail: outcome.detail }, 'message moved to the dead-letter queue');
      await deps.acks.delete(m);
      return;
    }
  }
}
