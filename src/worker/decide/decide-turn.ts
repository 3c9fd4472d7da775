import { describeScope, type PauseMark, pausedDelaySeconds, scopeKey } from '../../core/pause.js';
import type { RateSlot } from '../../core/rate-limit.js';
import { SQS_MAX_DELAY_SECONDS } from '../../core/sqs-limits.js';
import { handedBackNow, leaseLost, type Outcome } from './decide.js';
import { mayHold, NOT_HELD, type Receives } from './resend.js';

/*
 * The rules of a job's turn, after its claim (decide.ts has the Outcome they build): a pause, its
 * tenant's cap, its rate limit. Each answers 'run', or how the message ends instead: wait in the
 * worker (held, no receive spent) or deferred (re-sent, not an attempt).
 */

export interface PermitFacts {
  /** The permit's index, 'full' when every permit of the tenant is taken, 'unavailable' when memcached cannot be asked. */
  readonly permit: number | 'full' | 'unavailable';
  readonly tenant: string;
  readonly cap: number;
  readonly capDelaySeconds: number;
  /** There is room for one more message waiting here for a permit (fewer than `concurrency + prefetch` wait). */
  readonly canWait: boolean;
  /** How soon a waiting message asks again, for a permit freed on another worker. */
  readonly waitRetryMs: number;
  readonly receives: Receives;
  /** The heartbeat lost the lease while the permit was asked for. */
  readonly leaseLost: boolean;
  readonly stopping: boolean;
}

/**
 * After asking for a permit of the tenant's cap: 'run'; or, every permit taken, wait here for one (no
 * receive spent), or deferred when the room here is full or it may not wait held (mayHold).
 */
export function afterPermit(f: PermitFacts): Outcome | 'run' {
  if (f.leaseLost) return leaseLost('a permit of its tenant was being taken');
  if (f.stopping) return handedBackNow('worker is stopping');
  // 'unavailable': memcached cannot be asked; the job runs without the cap rather than wait for it.
  if (f.permit !== 'full') return 'run';
  const reason = `tenant "${f.tenant}" has ${f.cap} job(s) running, its cap`;
  if (f.canWait && mayHold(f.receives))
    return { kind: 'wait', reason, limit: 'tenant-cap', until: { permitOf: f.tenant, retryMs: f.waitRetryMs } };
  const why = f.canWait ? reason + NOT_HELD : reason;
  return { kind: 'defer', reason: why, delaySeconds: f.capDelaySeconds, limit: 'tenant-cap' };
}

/** A paused message is held only with at least this much of its 12-hour hold left (else it is re-sent). */
const PAUSE_HOLD_LEFT_MS = 60_000;

export interface PauseFacts {
  /** The pause in force that stops the job (its queue's, its job type's, its tenant's). */
  readonly mark: PauseMark;
  readonly now: number;
  /** There is room for it to wait here without braking the queue's intake (within the free room). */
  readonly canWait: boolean;
  /** How long it may still be held: until HOLD_MARGIN_MS before SQS's 12-hour hold of it ends. */
  readonly holdLeftMs: number;
  /** A FIFO message waits anyway while its hold lasts (a re-send would put it behind its group). */
  readonly fifo: boolean;
  /** The longest a paused message is handed back for (the worker's pausedDelaySeconds). */
  readonly longestDelaySeconds: number;
  readonly receives: Receives;
  readonly leaseLost: boolean;
  readonly stopping: boolean;
}

/**
 * A job found paused when its turn came: wait here until the pause ends (held, no receive spent),
 * or, with the room's free part full or past half its receives (mayHold), deferred: re-sent to come
 * back after pausedDelaySeconds (how long the pause has lasted, within bounds), not an attempt.
 */
export function afterPause(f: PauseFacts): Outcome {
  if (f.leaseLost) return leaseLost('its pause was being read');
  if (f.stopping) return handedBackNow('worker is stopping');
  const { mark } = f;
  const until = mark.until === undefined ? '' : ` until ${new Date(mark.until).toISOString()}`;
  const reason = `${describeScope(mark.scope)} is paused${until} by ${mark.by}${mark.reason === undefined ? '' : `: ${mark.reason}`}`;
  const delaySeconds = pausedDelaySeconds(mark, f.now, f.longestDelaySeconds);
  const withinHold = f.holdLeftMs >= PAUSE_HOLD_LEFT_MS;
  if (f.fifo) {
    if (withinHold) return { kind: 'wait', reason, limit: 'paused', until: { resumeOf: scopeKey(mark.scope) } };
    // Its group's order is kept only by visibility: back after the delay, a receive spent (docs/guide/pause.md says so).
    return { kind: 'hand-back', reason: `${reason}: held as long as SQS allows`, delaySeconds, abandoned: false };
  }
  // Held only where a worker that dies cannot spend its last receive (a queue of maxReceiveCount 1 never holds one).
  const spare = f.receives.max === undefined || f.receives.max > 1;
  if (f.canWait && withinHold && spare && mayHold(f.receives))
    return { kind: 'wait', reason, limit: 'paused', until: { resumeOf: scopeKey(mark.scope) } };
  const why = f.canWait && withinHold && spare ? reason + NOT_HELD : reason;
  return { kind: 'defer', reason: why, delaySeconds, limit: 'paused' };
}

export interface RateFacts {
  /** When the job may start: its slot (`reserved`), or when to ask again; 'unavailable' when memcached cannot be asked. */
  readonly slot: RateSlot | 'unavailable';
  readonly now: number;
  /** What is limited, for the reason: `job "x"`, or `job "x" for tenant "t"`. */
  readonly what: string;
  readonly perSecond: number;
  /** There is room for one more message waiting here (a FIFO message waits anyway, even past mayHold: it holds its group). */
  readonly canWait: boolean;
  /** How long it may still wait held: until HOLD_MARGIN_MS before SQS's 12-hour hold of it ends. */
  readonly waitLimitMs: number;
  /** A FIFO message is never re-sent (the copy would join the back of its group). */
  readonly fifo: boolean;
  readonly receives: Receives;
  readonly leaseLost: boolean;
  readonly stopping: boolean;
}

/**
 * After asking for a start under the job's rate limit: 'run' when its slot is now; else wait here
 * for it (no receive spent), or, when the room here is full, it may not wait held (mayHold) or its
 * slot is past what its hold allows, deferred until about then (at most 15 minutes), keeping its slot.
 */
export function afterRateSlot(f: RateFacts): Outcome | 'run' {
  if (f.leaseLost) return leaseLost('its rate limit was being asked');
  if (f.stopping) return handedBackNow('worker is stopping');
  // 'unavailable': memcached cannot be asked; the job runs without the limit rather than wait for it.
  if (f.slot === 'unavailable' || (f.slot.reserved && f.slot.at <= f.now)) return 'run';
  const reason = `${f.what} is at its rate limit (${f.perSecond}/s)`;
  const withinHold = f.slot.at - f.now <= f.waitLimitMs;
  const held = f.fifo || mayHold(f.receives);
  if (withinHold && (f.fifo || f.canWait) && held) return { kind: 'wait', reason, limit: 'rate-limit', until: { at: f.slot.at } };
  const delaySeconds = Math.min(SQS_MAX_DELAY_SECONDS, Math.max(1, Math.ceil((f.slot.at - f.now) / 1000)));
  // FIFO: its group waits for it; past the hold, it goes back by visibility (a receive spent, the order kept).
  if (f.fifo) return { kind: 'hand-back', reason: `${reason}: its turn is past the 12-hour hold`, delaySeconds, abandoned: false };
  // Re-sent to come back about then, carrying its reserved slot (a slot it does not keep would push its turn further off).
  const why = withinHold && f.canWait && !held ? reason + NOT_HELD : reason;
  return { kind: 'defer', reason: why, delaySeconds, limit: 'rate-limit', ...(f.slot.reserved ? { rateSlotAt: f.slot.at } : {}) };
}
