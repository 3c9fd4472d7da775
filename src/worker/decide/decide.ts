import { RetryLaterError, UnrecoverableError } from '../../core/errors.js';
import type { BackoffPolicy } from '../../core/definition-rules.js';
import type { UnfinishedRuns } from '../../core/delivery.js';
import type { PoisonReason } from '../../core/envelope.js';
import type { DeadLetterReason, DuplicateState, Limit } from '../../core/job-events.js';
import { SQS_MAX_DELAY_SECONDS } from '../../core/sqs-limits.js';
import { retryDelayMs } from './backoff.js';
import type { AbortCode } from '../hold/lease.js';

/** How a handler's run ended. */
export type Execution =
  /** `value`: what the handler returned (a batch handler's failed items). */
  | { readonly kind: 'returned'; readonly value: unknown; readonly processMs: number }
  | { readonly kind: 'threw'; readonly error: Error; readonly processMs: number }
  /**
   * The lease's signal fired first. `abandoned`: the handler had not settled `graceMs` after it,
   * and may still be running.
   */
  | {
      readonly kind: 'aborted';
      readonly code: AbortCode | undefined;
      readonly reason: Error;
      readonly abandoned: boolean;
      readonly processMs: number;
    };

/**
 * What happens to a received message: pure functions from what is known about it to an Outcome,
 * which settle() carries out. With decide-claim.ts (the rules after the claim of its job id), the
 * only place an Outcome is built (test/unit/worker/fate-home.test.ts fails on one built elsewhere);
 * each rule has one row in test/unit/worker/decide/decide.test.ts.
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
  /**
   * Handed back without (finishing) running: visible again after `delaySeconds`, re-sent when it has
   * no receive left. `notAnAttempt`: the job did not run on this receive, which is then not counted:
   * re-sent with a fresh count that carries the job's attempts and `unfinishedRuns` (never on FIFO).
   */
  | {
      readonly kind: 'hand-back';
      readonly reason: string;
      readonly delaySeconds: number;
      readonly abandoned: boolean;
      readonly notAnAttempt?: true;
      /** With notAnAttempt: the job's runs that never finished, for the copy to carry (see ATTR_UNFINISHED_RUNS). */
      readonly unfinishedRuns?: UnfinishedRuns;
    }
  | { readonly kind: 'lost'; readonly reason: string; readonly abandoned: boolean }
  /**
   * Not run now (its tenant at its cap, or the job at its rate limit): re-sent after `delaySeconds`,
   * this receive not counted as an attempt; `rateSlotAt`, the slot it reserved, goes with the copy.
   */
  | { readonly kind: 'defer'; readonly reason: string; readonly delaySeconds: number; readonly limit: Limit; readonly rateSlotAt?: number }
  /**
   * Not run now (its tenant at its cap, or the job at its rate limit), and kept here instead: held
   * (the heartbeat keeps it), its claims let go, tried again when `until` says. Nothing is re-sent,
   * and no receive spent unless the worker dies (see mayHold).
   */
  | { readonly kind: 'wait'; readonly reason: string; readonly limit: Limit; readonly until: WaitUntil }
  /** The job (or its fan-out) was cancelled: deleted, not run again, recorded as cancelled. */
  | { readonly kind: 'cancelled'; readonly reason: string; readonly abandoned: boolean };
/**
 * When a waiting message is tried again: a permit of `permitOf` freed here (or every `retryMs`, for
 * one freed elsewhere), at `at` (its rate slot), or once the pause kept under `resumeOf` (a scope
 * key) is no longer in force.
 */
export type WaitUntil = { readonly permitOf: string; readonly retryMs: number } | { readonly at: number } | { readonly resumeOf: string };

// `abandoned`: the signal fired and the handler had not settled within the grace period. Its lock is
// then kept until its TTL runs out instead of released: another worker does not start the job beside it.

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
  /** What a run cut short by a Lambda invocation's deadline needs (see cutShort); without it, handed back as at shutdown. */
  readonly held?: HeldFacts;
}

/** What is known of a held message beyond its run: its queue's kind, the runs it carries that never finished, and its claim. */
export interface HeldFacts {
  readonly fifo: boolean;
  /** Its receive count (what SQS's redrive counts), and the queue's maxReceiveCount. */
  readonly receiveCount: number;
  readonly maxReceiveCount: number | undefined;
  readonly unfinished: UnfinishedRuns;
  /** The token of its job id's claim, when it was claimed (the run that never finished, for a copy to count once). */
  readonly claimToken: string | undefined;
  readonly lockTtlSeconds: number;
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
  if (x.kind === 'aborted' && x.code === 'SHUTDOWN') return { kind: 'hand-back', reason: x.reason.message, delaySeconds: 0, abandoned };
  if (x.kind === 'aborted' && x.code === 'DEADLINE')
    return f.held === undefined
      ? { kind: 'hand-back', reason: x.reason.message, delaySeconds: 0, abandoned }
      : cutShort(x.reason.message, f.held, { ran: true, abandoned });
  // Cancelled while it ran: whatever the handler did once its signal fired (stopped, or threw), it is not retried.
  if (x.kind === 'aborted' && x.code === 'CANCELLED') return { kind: 'cancelled', reason: x.reason.message, abandoned };
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
 * A Lambda invocation's deadline came before the job ended (`ran`: its handler was running; else it
 * never started). A record reported failed spends a receive, so on a standard queue it is re-sent,
 * this receive not counted and its attempt kept: the deadline is no failure of the job. A run cut
 * short counts as a run that never finished, so a job that never ends within the function's time
 * is dead-lettered with the reason once it has maxReceiveCount of them (decide-claim.ts); one whose
 * handler ignored its signal (`abandoned`: it may still run) comes back once its claim lapses. On
 * FIFO a copy would join the back of its group: handed back by visibility, its group behind it, the
 * receive spent; a run cut short on its last receive is dead-lettered with the reason.
 */
export function cutShort(reason: string, h: HeldFacts, o: { readonly ran: boolean; readonly abandoned: boolean }): Outcome {
  if (h.fifo) {
    // Each cut short spends a receive here: on its last, a run that never ends in time goes to the DLQ with the reason.
    if (o.ran && h.maxReceiveCount !== undefined && h.receiveCount >= h.maxReceiveCount) {
      const detail = `cut short by the Lambda invocation's deadline on receive ${h.receiveCount} of ${h.maxReceiveCount}: ${reason}`;
      return { kind: 'dead-letter', reason: 'retries-exhausted', detail };
    }
    return { kind: 'hand-back', reason, delaySeconds: 0, abandoned: o.abandoned };
  }
  const { runs, last } = h.unfinished;
  const unfinishedRuns = o.ran ? { runs: runs + 1, last: h.claimToken ?? last } : h.unfinished;
  const delaySeconds = o.abandoned ? Math.min(h.lockTtlSeconds, SQS_MAX_DELAY_SECONDS) : 0;
  return { kind: 'hand-back', reason, delaySeconds, abandoned: o.abandoned, notAnAttempt: true, unfinishedRuns };
}

/** The message is not a job this worker can run (not an envelope, an unknown job, invalid args): to the DLQ with the reason. */
export function poisoned(reason: PoisonReason, detail: string): Outcome {
  return { kind: 'dead-letter', reason, detail };
}

/** A copy re-sent only to be counted in its fan-out (its job is in the DLQ already): deleted once counted, never run. */
export const DEAD_LETTERED_COPY: Outcome = { kind: 'duplicate', state: 'dead-lettered' };

/** The lease was lost (its visibility ran out, SQS refused it, its lock was taken) while `doing`: left alone. */
export function leaseLost(doing: string): Outcome {
  return { kind: 'lost', reason: `the lease was lost while ${doing}`, abandoned: false };
}

/** Cancelled before it started, while `doing` (a batch item that waited for its batch). */
export function cancelledWhile(doing: string): Outcome {
  return { kind: 'cancelled', reason: `cancelled while ${doing}`, abandoned: false };
}

/** Not run (and not running here): visible again after `delaySeconds`. */
export function handedBack(reason: string, delaySeconds: number): Outcome {
  return { kind: 'hand-back', reason, delaySeconds, abandoned: false };
}

/** Not started, and not to be: visible again at once, without spending an attempt. */
export const handedBackNow = (reason: string): Outcome => handedBack(reason, 0);

/** The worker failed on it (a bug, never the job's fault): handed back after `delaySeconds`. */
export const internalError = (error: Error, delaySeconds: number): Outcome => handedBack(`internal error: ${error.message}`, delaySeconds);

/**
 * The heartbeat found the lease lost after the outcome was decided: only what is safe on a message
 * someone else may hold now still happens. A success, a duplicate or a cancelled job is still deleted
 * (a stale handle fails harmlessly; the copy then ends as a duplicate or cancelled); a hand-back,
 * re-send or dead-letter is left to its new holder.
 */
export function onceLost(outcome: Outcome): Outcome {
  if (outcome.kind === 'succeeded' || outcome.kind === 'duplicate' || outcome.kind === 'cancelled' || outcome.kind === 'lost')
    return outcome;
  const abandoned = 'abandoned' in outcome && outcome.abandoned;
  return { kind: 'lost', reason: 'the lease was lost while the outcome was being settled', abandoned };
}
