import { randomBytes } from 'node:crypto';
import { isFifoQueue } from '../../core/queue-url.js';
import type { WorkerContext } from '../context.js';
import { afterClaim } from '../fate/decide-claim.js';
import { afterPermit, afterRateSlot, DEAD_LETTERED_COPY, type Outcome } from '../fate/decide.js';
import type { Receives } from '../fate/resend.js';
import { HOLD_MARGIN_MS, slotKept } from '../../core/rate-limit.js';
import { SQS_MAX_HOLD_MS } from '../../core/sqs-limits.js';
import { attemptOf, carriedRateSlot, isDeadLetteredCopy, originOf, unfinishedRunsOf } from '../../core/delivery.js';
import { CapTurns } from '../cap-turns.js';
import type { Lease } from '../hold/lease.js';
import type { GoodReading } from './reading.js';

/** The worker's room for jobs at their tenant's cap or their rate limit to wait in (held, no handler slot). */
export interface WaitRoom {
  /** Whether `lease` may wait here: one that has waited keeps its place; a new one while there is room. */
  admits(lease: Lease): boolean;
  /** Whether `lease` has waited here before (it keeps its place). */
  hasWaited(lease: Lease): boolean;
  /** Messages of `tenant` waiting here for one of its permits. */
  waitingFor(tenant: string): number;
  /** Most messages of one tenant that wait here for a permit: concurrency + prefetch, the part of the room that never brakes intake. */
  readonly perTenant: number;
  /** When capped tenants' turns come here: who waits, and how long a re-sent one is delayed. */
  readonly turns: CapTurns;
}

/** No room: every job at its cap or its rate limit is deferred (a job run alone, as in tests). */
export function noWaitRoom(): WaitRoom {
  return { admits: () => false, hasWaited: () => false, waitingFor: () => 0, perTenant: 0, turns: new CapTurns() };
}

/**
 * Claim the job id of a message read well: 'run' (the lock is the lease's now), or how the message
 * ends instead. `stopping`: whether a stop begun meanwhile hands the message back (a batch item's
 * claim is held and flushed by stop() instead).
 */
export async function claimFor(
  ctx: WorkerContext,
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
  if (claim === 'unavailable') ctx.emit('job:lock-unavailable', lease.info ?? read.info);
  const fifo = isFifoQueue(m.queueUrl);
  // Back while its job id is held under it: which run holds it, to count each unfinished run once.
  const holder = claim === 'running' && !fifo ? await ctx.lock.holder?.(read.envelope.id) : undefined;
  return afterClaim({
    claim,
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

/** How soon a message waiting for its tenant's permit asks again (for one freed on another worker). */
const CAP_WAIT_RETRY_MS = 100;

/**
 * Take a permit of the job's tenant when it has a cap (fleet-wide, in memcached): 'run'; at the cap,
 * wait here while fewer than `room.perTenant` of its tenant's jobs wait, or while no other tenant's
 * jobs are among its queue's last received (then it may fill the room, slowing the queue's intake
 * to its pace), and the room has space; else deferred: re-sent once, to come back at about its
 * turn (CapTurns).
 */
export async function permitFor(
  ctx: WorkerContext,
  lease: Lease,
  read: GoodReading,
  token: string,
  room: WaitRoom,
): Promise<Outcome | 'run'> {
  const { tenantCaps: caps, capDelaySeconds } = ctx.config;
  const tenant = read.envelope.tenant;
  const queueUrl = lease.message.queueUrl;
  // Own properties only: a tenant named "constructor" or "toString" has no cap unless given one.
  if (tenant === undefined || ctx.permits === undefined || isFifoQueue(queueUrl) || !Object.hasOwn(caps, tenant)) return 'run';
  const cap = caps[tenant]!;
  // 'unavailable' (memcached unreachable, or a Permits that threw): the job runs without the cap.
  const permit = await ctx.permits.take(tenant, cap, token, ctx.config.lockTtlSeconds);
  const now = Date.now();
  if (typeof permit === 'number') {
    lease.hold({ permit: { key: tenant, index: permit, token } });
    room.turns.started(tenant, now);
  }
  const waiting = permit === 'full' ? room.waitingFor(tenant) : 0;
  const outcome = afterPermit({
    permit,
    tenant,
    cap,
    capDelaySeconds,
    canWait:
      permit === 'full' &&
      (room.hasWaited(lease) || (room.admits(lease) && (waiting < room.perTenant || !room.turns.contended(queueUrl, tenant)))),
    waitRetryMs: CAP_WAIT_RETRY_MS,
    receives: receivesOf(ctx, lease),
    leaseLost: lease.lost,
    stopping: ctx.stop.signal.aborted,
  });
  // Re-sent: to come back at about its turn, which is given to it (the next one re-sent comes back after it).
  if (outcome !== 'run' && outcome.kind === 'defer')
    return { ...outcome, delaySeconds: room.turns.deferral(tenant, waiting, capDelaySeconds, now) };
  return outcome;
}

/**
 * Take the job's next start under its rate limit (fleet-wide, in memcached), when it has one:
 * 'run' when that start is now (or a start it waited for has come); else wait here for it while
 * the room has space (a FIFO message always waits: its group waits with it), else
 * deferred until about then.
 */
export async function rateSlotFor(ctx: WorkerContext, lease: Lease, read: GoodReading, room: WaitRoom): Promise<Outcome | 'run'> {
  const job = read.job;
  const limit = job.rateLimit;
  if (limit === undefined || ctx.rates === undefined) return 'run';
  // The slot it waited for here, or reserved before it was re-sent to wait (ATTR_RATE_SLOT).
  const waited = lease.rateSlotAt ?? carriedRateSlot(lease.message);
  lease.rateSlotAt = undefined;
  const tenant = limit.perTenant ? read.envelope.tenant : undefined;
  const key = tenant === undefined ? job.name : `${job.name}/${tenant}`;
  // That slot, unless it is too late for it now (a timer may also fire a little early: it waits on).
  const slot =
    waited !== undefined && slotKept(waited, Date.now()) ? { at: waited, reserved: true } : await ctx.rates.reserve(key, limit, Date.now());
  const now = Date.now();
  const outcome = afterRateSlot({
    slot,
    now,
    what: tenant === undefined ? `job "${job.name}"` : `job "${job.name}" for tenant "${tenant}"`,
    perSecond: limit.perSecond,
    canWait: room.admits(lease),
    waitLimitMs: lease.receivedAt + SQS_MAX_HOLD_MS - HOLD_MARGIN_MS - now,
    fifo: isFifoQueue(lease.message.queueUrl),
    receives: receivesOf(ctx, lease),
    leaseLost: lease.lost,
    stopping: ctx.stop.signal.aborted,
  });
  if (outcome !== 'run' && outcome.kind === 'wait' && slot !== 'unavailable' && slot.reserved) lease.rateSlotAt = slot.at;
  return outcome;
}

const receivesOf = (ctx: WorkerContext, lease: Lease): Receives => ({
  count: lease.message.receiveCount,
  attempt: attemptOf(lease.message),
  max: ctx.queueOf(lease.message.queueUrl).maxReceiveCount,
});

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
