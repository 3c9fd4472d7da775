import type { QueuePort, ReceivedMessage } from '../../ports/queue.js';
import { sleep } from '../../sleep.js';
import type { ReceiveCapacity } from './capacity.js';
import type { Heartbeat } from '../hold/heartbeat.js';
import type { Lease } from '../hold/lease.js';

export interface PollerDeps {
  readonly sqs: QueuePort;
  readonly capacity: ReceiveCapacity;
  readonly heartbeat: Heartbeat;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  /** Aborted when stop() begins: no new receive starts, and backoff sleeps end. */
  readonly stopping: AbortSignal;
  /**
   * Aborts an open long poll (unless it ends on its own within a second): once the running handlers
   * are done (at once for an idle worker), or on a second signal. Until then an open poll may
   * return, and what it brings is handed back.
   */
  readonly force: AbortSignal;
  /** Messages received (`asked`: how many the receive asked for): held under the heartbeat already, to be scheduled. */
  readonly onReceived: (queueUrl: string, leases: Lease[], asked: number) => void;
  /** Messages a poll brought back after stop() began: to be handed back at once. */
  readonly onReceivedWhileStopping: (leases: Lease[]) => Promise<void>;
  readonly onError: (where: string, error: unknown) => void;
}

/**
 * One queue's receive loop: reserve free capacity, long-poll for up to that many messages, track
 * them under the heartbeat, hand them on. A failing receive backs off (250 ms doubling to 30 s)
 * without holding capacity, so other queues go on.
 */
export async function poll(deps: PollerDeps, queueUrl: string): Promise<void> {
  let failures = 0;
  while (!deps.stopping.aborted) {
    const count = await deps.capacity.reserve();
    if (count === 0) break; // stopping
    let messages: ReceivedMessage[];
    const ending = endOnForce(deps.force, deps.waitTimeSeconds);
    try {
      messages = await deps.sqs.receive(queueUrl, count, deps.waitTimeSeconds, deps.visibilityTimeoutSeconds, ending.signal);
      failures = 0;
    } catch (error) {
      deps.capacity.returnSlots(count);
      if (deps.force.aborted) break; // the poll was aborted: the worker is stopping
      failures++;
      deps.onError('receive', error);
      await sleep(Math.min(30_000, 250 * 2 ** failures), deps.stopping);
      continue;
    } finally {
      ending.done();
    }
    const now = Date.now();
    const leases = messages.map((m) => deps.heartbeat.track(m, now));
    if (deps.stopping.aborted) {
      // The poll returned while running handlers drained (or before its abort took effect): hand these back at once.
      deps.capacity.returnSlots(count);
      await deps.onReceivedWhileStopping(leases);
      break;
    }
    // Held first, then the reservation returned: capacity never counts these messages twice or not at all.
    deps.onReceived(queueUrl, leases, count);
    deps.capacity.returnSlots(count);
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
