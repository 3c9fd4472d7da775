import type { ReceivedMessage } from '../../core/message.js';
import { SQS_RECEIVE_LIMIT } from '../../core/sqs-limits.js';
import type { IntakeNeeds } from '../context.js';
import { sleep } from '../../core/sleep.js';
import type { ReceiveCapacity } from './capacity.js';
import type { ScheduledQueue } from './scheduler.js';
import type { Lease } from '../hold/lease.js';

/** Where a receive loop hands what it received. */
export interface Intake {
  readonly capacity: ReceiveCapacity<ScheduledQueue>;
  /** Messages received (`asked`: how many the receive asked for): held under the heartbeat already, to be scheduled. */
  readonly received: (queueUrl: string, leases: Lease[], asked: number) => void;
  /** Messages a poll brought back after stop() began: to be handed back at once. */
  readonly receivedWhileStopping: (leases: Lease[]) => Promise<void>;
}

/**
 * A queue's receive loops, scaled to demand: one is always open; each receive that comes back
 * full (10) while the worker has room for another full receive opens one more, while fewer than
 * `most` are open; a loop beyond the first waits at most 1 s and ends when its receive comes back
 * with fewer than 10 (or full with no room left). A deep queue the worker keeps up with is
 * received from by up to `most` long polls at once (one round trip no longer paces the intake);
 * an idle, trickling or braked one keeps one open (a burst costs each extra loop one empty
 * receive at most). Resolves once every loop has ended (stop).
 */
export function pollQueue(ctx: IntakeNeeds, intake: Intake, queue: ScheduledQueue, most: number): Promise<void> {
  return new Promise((resolve) => {
    let open = 0;
    const start = (first: boolean) => {
      open++;
      const more = () => {
        if (open < most && !ctx.stop.signal.aborted) start(false);
      };
      poll(ctx, intake, queue, first, more)
        .catch((error: unknown) => ctx.report.onError('receive loop', error))
        .finally(() => {
          if (--open === 0) resolve();
        });
    };
    start(true);
  });
}

/**
 * One receive loop: reserve free capacity (in its lane's turn), long-poll for up to that many messages, track
 * them under the heartbeat, hand them on. A failing receive backs off (250 ms doubling to 30 s)
 * without holding capacity, so other queues go on. `first`: the queue's loop that never ends
 * before stop; `more`: a receive came back full, another loop may open (pollQueue).
 */
async function poll(ctx: IntakeNeeds, intake: Intake, queue: ScheduledQueue, first: boolean, more: () => void): Promise<void> {
  const queueUrl = queue.url;
  const { visibilityTimeoutSeconds } = ctx.config;
  // A loop beyond the first waits at most a second: it helps only while the queue is deep (SQS
  // answers at once then), and its empty poll after a burst must not hold the places it asked for
  // (other queues' receives) for a full wait.
  const waitTimeSeconds = first ? ctx.config.waitTimeSeconds : Math.min(1, ctx.config.waitTimeSeconds);
  const stopping = ctx.stop.signal;
  const force = ctx.force.signal;
  const capacity = intake.capacity;
  let failures = 0;
  // A long poll holds the places it asked for until it returns, so a queue asks for about what it
  // found last time (twice that, 1 to 10): an idle lane, or one whose work trickles in, must not
  // keep places from the lanes with work waiting. A poll that found as many as it asked for asks
  // for twice that; one held below its ask (by its lane's quota) that came back full, for 10.
  let ask = 10;
  while (!stopping.aborted) {
    // A paused queue is not received from until it is resumed.
    if (ctx.pauses !== undefined) await ctx.pauses.queueOpen(queueUrl, stopping);
    if (stopping.aborted) break;
    const count = await capacity.reserve(queue, ask);
    if (count === 0) break; // stopping
    let messages: ReceivedMessage[];
    const ending = endOnForce(force, waitTimeSeconds);
    try {
      messages = await ctx.sqs.receive(queueUrl, count, waitTimeSeconds, visibilityTimeoutSeconds, ending.signal);
      failures = 0;
      // Held below its ask (its lane's quota, free room) and still full: the queue has more, and
      // the receive must not stay small. Else about twice what it found (a probe that found one
      // asks for 2, not 10: an idle queue's long poll holds what it asked for).
      ask = messages.length === count && count < ask ? 10 : Math.min(10, Math.max(1, 2 * messages.length));
    } catch (error) {
      capacity.returnReserved(count, queue, 0);
      if (force.aborted) break; // the poll was aborted: the worker is stopping
      failures++;
      ctx.report.onError('receive', error);
      await sleep(Math.min(30_000, 250 * 2 ** failures), stopping);
      continue;
    } finally {
      ending.done();
    }
    const now = Date.now();
    const leases = messages.map((m) => ctx.heartbeat.hold(m, now));
    if (stopping.aborted) {
      // The poll returned while running handlers drained (or before its abort took effect): hand these back at once.
      capacity.returnReserved(count, queue, leases.length);
      await intake.receivedWhileStopping(leases);
      break;
    }
    // Held first, then the reservation returned: capacity never counts these messages twice or not at all.
    intake.received(queueUrl, leases, count);
    capacity.returnReserved(count, queue, leases.length);
    // Full, and the worker has room for another full receive at once: the queue is deep and
    // the worker keeps up (batch jobs, fast handlers). A worker whose handlers are all busy, or a
    // queue braked by jobs waiting for their turn, gains nothing from another poll.
    if (messages.length === SQS_RECEIVE_LIMIT && capacity.hasRoomFor(SQS_RECEIVE_LIMIT, queue)) more();
    else if (!first) break; // the queue is not deep (or the worker has no room for more): one loop will do
  }
}

/**
 * A poll due to end on its own within this long is let end rather than aborted: the server may
 * still hand a message to an aborted poll, which then stays hidden for a visibility timeout.
 */
const LET_END_MS = 1_000;

/** The signal for one receive: aborted when `force` is, unless the poll ends on its own within LET_END_MS. */
function endOnForce(force: AbortSignal, waitTimeSeconds: number): { signal: AbortSignal; done: () => void } {
  const endsAt = Date.now() + waitTimeSeconds * 1000;
  const abort = new AbortController();
  const onForce = () => {
    if (endsAt - Date.now() > LET_END_MS) abort.abort();
  };
  force.addEventListener('abort', onForce, { once: true });
  if (force.aborted) onForce();
  return { signal: abort.signal, done: () => force.removeEventListener('abort', onForce) };
}
