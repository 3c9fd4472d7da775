import { randomBytes } from 'node:crypto';
import { isFifoQueue } from '../../core/queue-url.js';
import type { ClaimNeeds } from '../context.js';
import { afterClaim } from '../decide/decide-claim.js';
import { DEAD_LETTERED_COPY, type Outcome } from '../decide/decide.js';
import { firstSentAt, isDeadLetteredCopy, originOf, unfinishedRunsOf } from '../../core/delivery.js';
import type { ClaimResult } from '../../ports/lock.js';
import type { Lease } from '../hold/lease.js';
import type { GoodReading } from '../reading.js';

/**
 * Claim the job id of a message read well: 'run' (the lock is the lease's now), or how the message
 * ends instead. `stopping`: whether a stop begun meanwhile hands the message back (a batch item's
 * claim is held and flushed by stop() instead).
 */
export async function claimFor(
  ctx: ClaimNeeds,
  lease: Lease,
  read: GoodReading,
  token: string,
  stopping: boolean,
): Promise<Outcome | 'run'> {
  // A copy re-sent only to be counted in its fan-out: its job is in the DLQ already.
  if (isDeadLetteredCopy(lease.message)) return DEAD_LETTERED_COPY;
  const c = ctx.config;
  const m = lease.message;
  // Never throws: an error is 'unavailable' (worker/guarded-ports.ts).
  const claim = await ctx.lock.claim(read.envelope.id, token, c.lockTtlSeconds, {
    messageId: m.messageId,
    originId: originOf(m),
    receiveCount: m.receiveCount,
    ...(read.envelope.parent === undefined ? {} : { parentId: read.envelope.parent }),
  });
  if (claim === 'claimed') lease.hold({ lock: { jobId: read.envelope.id, token } });
  if (claim === 'unavailable') ctx.report.emit('job:lock-unavailable', lease.info ?? read.info);
  const fifo = isFifoQueue(m.queueUrl);
  // Back while its job id is held under it: which run holds it, to count each unfinished run once.
  const holder = claim === 'running' && !fifo ? await ctx.lock.holder?.(read.envelope.id) : undefined;
  return afterClaim({
    claim: (await storedCancel(ctx, read, m, claim, token)) ? 'cancelled' : claim,
    leaseLost: lease.lost,
    lockFailClosed: c.lockFailClosed,
    stopping: stopping && ctx.stop.signal.aborted,
    visibilityTimeoutSeconds: c.visibilityTimeoutSeconds,
    lockTtlSeconds: c.lockTtlSeconds,
    maxReceiveCount: ctx.queueOf(m.queueUrl).maxReceiveCount,
    unfinished: unfinishedRunsOf(m),
    holder,
    receiveCount: m.receiveCount,
    sentAgoMs: Date.now() - m.sentAt,
    fifo,
  });
}

/** A job the lock let through (claimed, or it could not tell) that the job store says was cancelled: memcached forgot its mark. */
async function storedCancel(ctx: ClaimNeeds, read: GoodReading, m: Lease['message'], claim: ClaimResult, token: string): Promise<boolean> {
  if (ctx.status === undefined || (claim !== 'claimed' && claim !== 'unavailable')) return false;
  return ctx.status.cancels.cancelled({
    jobId: read.envelope.id,
    token: claim === 'claimed' ? token : undefined,
    parentId: read.envelope.parent,
    sentAtMs: firstSentAt(m),
    lockUnavailable: claim === 'unavailable',
  });
}

/** This process's part of every token: 72 random bits, in base64url (never a `:`, which lock values use as a separator). */
const TOKEN_PROCESS = randomBytes(9).toString('base64url');
let tokenCount = 0;

/**
 * A token naming this run in the lock and the permits: unique across the fleet (this process's
 * random part, then a count). Held for as long as the job runs, so kept small and flat: joined, it
 * is one string of about 32 bytes, where `+` or a template makes a rope of two pieces over three
 * strings (about 90), and randomUUID()'s is a rope of 13 pieces (about 450).
 */
export const newToken = (): string => [TOKEN_PROCESS, (tokenCount++).toString(36)].join('.');
