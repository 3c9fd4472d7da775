import { RetryLaterError, UnrecoverableError } from '../../errors.js';
import type { BackoffPolicy } from '../../definition-rules.js';
import type { DeadLetterReason, DuplicateState } from '../../job-events.js';
import type { ClaimResult } from '../../ports/lock.js';
import { retryDelayMs } from './backoff.js';
import type { Execution } from '../run/execute.js';

/**
 * What happens to a received message: pure functions from what is known about it to an Outcome,
 * which settle() carries out. Each rule has one row in test/unit/worker/decide.test.ts.
 */
export type Outcome =
  /** `result`: what the handler returned (recorded, when small, for a tracked job). */
  | { readonly kind: 'succeeded'; readonly waitMs: number; readonly processMs: number; readonly result?: unknown }
  /** Redundant: the job completed, this very message is already in the DLQ, or another message carries the running job. */
  | { readonly kind: 'duplicate'; readonly state: DuplicateState }
  | { readonly kind: 'retry'; readonly error: Error; readonly delayMs: number; readonly processMs: number; readonly abandoned: boolean }
  | {
      readonly kind: 'dead-letter';
      readonly reason: DeadLetterReason;
      readonly detail: string;
      readonly error?: Error;
      readonly processMs?: number;
    }
  /** Handed back without (finishing) running: visible again after `delaySeconds`, re-sent when it has no receive left. */
  | { readonly kind: 'release'; readonly reason: string; readonly delaySeconds: number; readonly abandoned: boolean }
  | { readonly kind: 'lost'; readonly reason: string; readonly abandoned: boolean }
  /** Not run now (tenant at its cap): re-sent after `delaySeconds`, this receive not counted as an attempt. */
  | { readonly kind: 'defer'; readonly reason: string; readonly delaySeconds: number };
// `abandoned`: the signal fired and the handler had not settled within the grace period. Its lock
// is then kept until its TTL runs out instead of released, so another worker does not start the
// job beside it at once.

export interface ClaimFacts {
  readonly claim: ClaimResult;
  /** The heartbeat lost the lease while the claim was in flight. */
  readonly leaseLost: boolean;
  readonly lockFailClosed: boolean;
  /** The worker began stopping before the handler could start. */
  readonly stopping: boolean;
  readonly visibilityTimeoutSeconds: number;
}

/** After claiming the job id: 'run', or how the message ends without running. */
export function afterClaim(f: ClaimFacts): Outcome | 'run' {
  if (f.leaseLost) return { kind: 'lost', reason: 'the lease was lost while the job id was being claimed', abandoned: false };
  switch (f.claim) {
    case 'completed':
    case 'dead-lettered':
      return { kind: 'duplicate', state: f.claim };
    case 'running-copy':
      // Another message carries the running job: it retries, or comes back if its worker dies, so
      // this copy adds nothing and is deleted rather than deferred (a deferral spends a receive).
      return { kind: 'duplicate', state: 'running' };
    case 'running':
      return {
        kind: 'release',
        reason: 'the job id is running elsewhere under this same message (a redelivery): handed back for one visibility timeout',
        delaySeconds: f.visibilityTimeoutSeconds,
        abandoned: false,
      };
    case 'unavailable':
      if (f.lockFailClosed)
        return {
          kind: 'release',
          reason: 'dedupe lock unavailable (failing closed)',
          delaySeconds: f.visibilityTimeoutSeconds,
          abandoned: false,
        };
      break;
    case 'claimed':
      break;
  }
  if (f.stopping) return { kind: 'release', reason: 'worker is stopping', delaySeconds: 0, abandoned: false };
  return 'run';
}

/** After asking for a slot of the tenant's cap: 'run', or deferred when every slot is taken. */
export function afterSlot(slot: number | 'full' | 'unavailable', tenant: string, cap: number, delaySeconds: number): Outcome | 'run' {
  // 'unavailable': memcached cannot be asked; the job runs without the cap rather than wait for it.
  if (slot !== 'full') return 'run';
  return { kind: 'defer', reason: `tenant "${tenant}" has ${cap} job(s) running, its cap`, delaySeconds };
}

export interface RunFacts {
  readonly execution: Execution;
  /** SQS's receive count of this message: what its redrive policy counts. */
  readonly receiveCount: number;
  /** The job's attempt (receives across re-sends): what backoff grows with. */
  readonly attempt: number;
  readonly maxReceiveCount: number | undefined;
  readonly backoff: BackoffPolicy;
  readonly waitMs: number;
  readonly random?: () => number;
}

/** After the handler ran (or its signal fired): how the message ends. */
export function afterRun(f: RunFacts): Outcome {
  const x = f.execution;
  if (x.kind === 'returned') {
    return x.value === undefined
      ? { kind: 'succeeded', waitMs: f.waitMs, processMs: x.processMs }
      : { kind: 'succeeded', waitMs: f.waitMs, processMs: x.processMs, result: x.value };
  }
  const abandoned = x.kind === 'aborted' && x.abandoned;
  if (x.kind === 'aborted' && x.code === 'LEASE_LOST') return { kind: 'lost', reason: x.reason.message, abandoned };
  if (x.kind === 'aborted' && x.code === 'SHUTDOWN') return { kind: 'release', reason: x.reason.message, delaySeconds: 0, abandoned };
  // A timeout, or the handler threw: a failed attempt.
  const error = x.kind === 'aborted' ? x.reason : x.error;
  const processMs = x.processMs;
  if (error instanceof UnrecoverableError) return { kind: 'dead-letter', reason: 'unrecoverable', detail: error.message, error, processMs };
  if (error instanceof RetryLaterError) return { kind: 'retry', error, delayMs: error.delayMs, processMs, abandoned };
  if (f.maxReceiveCount !== undefined && f.receiveCount >= f.maxReceiveCount) {
    const attempt =
      f.attempt === f.receiveCount
        ? `${f.receiveCount} of ${f.maxReceiveCount}`
        : `${f.attempt} (receive ${f.receiveCount} of ${f.maxReceiveCount} after a re-send)`;
    return {
      kind: 'dead-letter',
      reason: 'retries-exhausted',
      detail: `failed on attempt ${attempt}: ${error.name}: ${error.message}`,
      error,
      processMs,
    };
  }
  return { kind: 'retry', error, delayMs: retryDelayMs(f.backoff, f.attempt, f.random), processMs, abandoned };
}

/**
 * How one item of a batch ran: as the batch did, except that an item the handler reported failed
 * (`failure`) failed on its own while its neighbours succeeded.
 */
export function itemExecution(batch: Execution, failure: Error | undefined): Execution {
  if (batch.kind !== 'returned') return batch;
  if (failure !== undefined) return { kind: 'threw', error: failure, processMs: batch.processMs };
  return { kind: 'returned', value: undefined, processMs: batch.processMs }; // the batch's answer is not the item's result
}
