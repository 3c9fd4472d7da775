import { isFifoQueue, queueNameOf } from '../../core/queue-url.js';
import { HOLD_MARGIN_MS, slotKept } from '../../core/rate-limit.js';
import { SQS_MAX_HOLD_MS } from '../../core/sqs-limits.js';
import { attemptOf, carriedRateSlot } from '../../core/delivery.js';
import type { TurnNeeds } from '../context.js';
import type { Outcome } from '../decide/decide.js';
import { afterPause, afterPermit, afterRateSlot } from '../decide/decide-turn.js';
import type { Receives } from '../decide/resend.js';
import type { Lease } from '../hold/lease.js';
import type { GoodReading } from '../reading.js';
import { CapTurns } from './cap-turns.js';

/**
 * What a job's turn asks of the waiting room (room.ts): whether it may wait there, and who waits
 * already. A test runs a delivery with noRoom() or a room of its own.
 */
export interface Room {
  /** Whether `lease` may wait here: one that has waited keeps its place; a new one while there is room. */
  admits(lease: Lease): boolean;
  /** Whether a paused `lease` may wait here: it has waited, or fewer than `perTenant` wait for a pause (a room of their own). */
  admitsPaused(lease: Lease): boolean;
  /** Whether `lease` has waited here before (it keeps its place). */
  hasWaited(lease: Lease): boolean;
  /** Messages of `tenant` waiting here for one of its permits. */
  waitingFor(tenant: string): number;
  /** Most messages of one tenant that wait here for a permit: concurrency + prefetch, the part of the room that never brakes intake. */
  readonly perTenant: number;
  /** When capped tenants' turns come here: who waits, and how long a re-sent one is delayed. */
  readonly turns: CapTurns;
  /** Until when `lease` may be held at most: shortly before SQS's 12-hour limit, or a Lambda invocation's deadline. */
  holdEndsAt(lease: Lease): number;
  /** Whether a message may wait here for what has no known end (a pause): a worker's room; not a Lambda invocation's, which pays for each second. */
  readonly holdsOpenEnded: boolean;
}

/** The latest a message received at `receivedAt` may be held: shortly before SQS's 12-hour limit. */
export const sqsHoldEndsAt = (lease: Lease): number => lease.receivedAt + SQS_MAX_HOLD_MS - HOLD_MARGIN_MS;

/** No room: every job at its cap or its rate limit is deferred (a job run alone, as in tests). */
export function noRoom(): Room {
  return {
    admits: () => false,
    admitsPaused: () => false,
    hasWaited: () => false,
    waitingFor: () => 0,
    perTenant: 0,
    turns: new CapTurns(),
    holdEndsAt: sqsHoldEndsAt,
    holdsOpenEnded: true,
  };
}

/**
 * A claimed job's turn, asked once per run: a pause of its queue, job type or tenant, then its
 * tenant's permit (a cap), then its start under its rate limit. 'run' now; or how the message ends
 * instead: wait in the room (held, no receive spent), or deferred (re-sent to come back at about
 * its turn), or handed back.
 */
export async function turnFor(ctx: TurnNeeds, lease: Lease, read: GoodReading, token: string, room: Room): Promise<Outcome | 'run'> {
  const paused = pauseOf(ctx, lease, read, room);
  if (paused !== 'run') return paused;
  const permitted = await permitFor(ctx, lease, read, token, room);
  return permitted === 'run' ? rateSlotFor(ctx, lease, read, room) : permitted;
}

/**
 * A batch job's item found paused: deferred for a while (an item is never held waiting here: it
 * waits in its batch), or 'run'. On a FIFO queue items are not re-sent (their group's order): they
 * run, as a job or tenant pause does not hold FIFO messages, and a paused FIFO queue is not received from.
 */
export function pausedItem(ctx: TurnNeeds, lease: Lease, read: GoodReading): Outcome | 'run' {
  return isFifoQueue(lease.message.queueUrl) ? 'run' : pauseOf(ctx, lease, read, noRoom());
}

/**
 * The pause in force for the job, as this worker last read them (a second old at most): its
 * queue's, else (not on FIFO, where a re-send would put it behind its group) its job type's or its
 * tenant's. Paused, it waits in the room's free part (no receive spent, and the queue's intake not
 * braked for the other jobs), else it is deferred for a while (afterPause).
 */
function pauseOf(ctx: TurnNeeds, lease: Lease, read: GoodReading, room: Room): Outcome | 'run' {
  const board = ctx.pauses?.board;
  if (board === undefined || board.size === 0) return 'run';
  const url = lease.message.queueUrl;
  const now = Date.now();
  const fifo = isFifoQueue(url);
  const mark = board.queue(queueNameOf(url), now) ?? board.job(read.job.name, read.envelope.tenant, now);
  if (mark === undefined) return 'run';
  if (fifo && mark.scope.queue === undefined) {
    ctx.pauses?.warnOnce(mark, url);
    return 'run';
  }
  return afterPause({
    mark,
    now,
    canWait: room.admitsPaused(lease),
    holdLeftMs: room.holdsOpenEnded ? room.holdEndsAt(lease) - now : 0,
    fifo,
    longestDelaySeconds: ctx.config.pausedDelaySeconds,
    receives: receivesOf(ctx, lease),
    leaseLost: lease.lost,
    stopping: ctx.stop.signal.aborted,
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
async function permitFor(ctx: TurnNeeds, lease: Lease, read: GoodReading, token: string, room: Room): Promise<Outcome | 'run'> {
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
async function rateSlotFor(ctx: TurnNeeds, lease: Lease, read: GoodReading, room: Room): Promise<Outcome | 'run'> {
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
    waitLimitMs: room.holdEndsAt(lease) - now,
    fifo: isFifoQueue(lease.message.queueUrl),
    receives: receivesOf(ctx, lease),
    leaseLost: lease.lost,
    stopping: ctx.stop.signal.aborted,
  });
  if (outcome !== 'run' && outcome.kind === 'wait' && slot !== 'unavailable' && slot.reserved) lease.rateSlotAt = slot.at;
  return outcome;
}

const receivesOf = (ctx: TurnNeeds, lease: Lease): Receives => ({
  count: lease.message.receiveCount,
  attempt: attemptOf(lease.message),
  max: ctx.queueOf(lease.message.queueUrl).maxReceiveCount,
});
