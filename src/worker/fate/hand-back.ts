import type { JobInfo } from '../../job-events.js';
import type { SettleDeps } from './settle-deps.js';
import type { Lease } from '../hold/lease.js';
import { atReceiveLimit, resentMessage } from './resend.js';
import { jobLogger } from '../run/job-logger.js';

/*
 * How settle gives a message back to the queue without deleting it for good: visible again after a
 * delay, or re-sent (same body and job id, fresh receive count) where a hand-back would let SQS's
 * redrive take it, and a fairness deferral's re-send.
 */

/**
 * Make a message visible again after `seconds`, or, when that would let SQS's redrive move it to
 * the DLQ on its next receive, re-send it (same body and job id, fresh receive count) and delete it.
 */
export async function handBack(
  deps: SettleDeps,
  lease: Lease,
  info: JobInfo,
  seconds: number,
  reason: string,
  deadLettered = false,
): Promise<void> {
  const m = lease.message;
  const log = jobLogger(deps.logger, info);
  if (atReceiveLimit(m, deps.maxReceiveCount(m.queueUrl))) {
    // A message already in the DLQ goes back marked so, to be counted and never run again.
    const copy = resentMessage(m, seconds, true, deadLettered);
    try {
      await deps.sqs.send(m.queueUrl, copy);
    } catch (error) {
      deps.onError('re-send', error);
      log().error(
        { err: error, reason },
        'could not re-send a message with no receive left; handed back, and SQS may dead-letter it on its next receive',
      );
      await makeVisible(deps, lease, info, seconds);
      return;
    }
    const delaySeconds = copy.delaySeconds ?? 0;
    deps.emit('job:resent', { ...info, reason, delaySeconds });
    log().warn({ reason, delaySeconds }, 'the message had no receive left: re-sent with the same job id rather than handed back');
    await deps.acks.delete(m);
    return;
  }
  await makeVisible(deps, lease, info, seconds);
}

/** Re-send a message that did not run (its tenant at its cap), not counting this receive as an attempt. */
export async function defer(deps: SettleDeps, lease: Lease, info: JobInfo, seconds: number, reason: string): Promise<void> {
  const m = lease.message;
  const copy = resentMessage(m, seconds, false);
  try {
    await deps.sqs.send(m.queueUrl, copy);
  } catch (error) {
    deps.onError('defer', error);
    await handBack(deps, lease, info, seconds, reason);
    return;
  }
  deps.emit('job:deferred', { ...info, reason, delaySeconds: copy.delaySeconds ?? 0 });
  if (deps.logger.isLevelEnabled('debug'))
    jobLogger(deps.logger, info)().debug({ reason, delaySeconds: copy.delaySeconds }, 'deferred: re-sent to run later');
  await deps.acks.delete(m);
}

async function makeVisible(deps: SettleDeps, lease: Lease, info: JobInfo, seconds: number): Promise<void> {
  // Coalesced with other hand-backs into ChangeMessageVisibilityBatch calls; a failure is logged by the batcher.
  const changed = await deps.visibility.change(lease.message, seconds);
  if (!changed && deps.logger.isLevelEnabled('debug')) {
    jobLogger(deps.logger, info)().debug('could not change visibility; the message returns when its current visibility timeout ends');
  }
}
