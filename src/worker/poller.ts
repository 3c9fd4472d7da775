import type { QueuePort, ReceivedMessage } from '../ports/queue.js';
import { sleep } from '../sleep.js';
import type { ReceiveCapacity } from './capacity.js';
import type { Heartbeat } from './heartbeat.js';
import type { Lease } from './leases.js';

export interface PollerDeps {
  readonly sqs: QueuePort;
  readonly capacity: ReceiveCapacity;
  readonly heartbeat: Heartbeat;
  readonly waitTimeSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  /** Aborted when stop() begins: no new receive starts, and backoff sleeps end. */
  readonly stopping: AbortSignal;
  /** Aborts an open long poll: only when stopping at once (second signal), never on a graceful stop. */
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
    try {
      messages = await deps.sqs.receive(queueUrl, count, deps.waitTimeSeconds, deps.visibilityTimeoutSeconds, deps.force);
      failures = 0;
    } catch (error) {
      deps.capacity.returnSlots(count);
      if (deps.force.aborted) break;
      failures++;
      deps.onError('receive', error);
      await sleep(Math.min(30_000, 250 * 2 ** failures), deps.stopping);
      continue;
    }
    const now = Date.now();
    const leases = messages.map((m) => deps.heartbeat.track(m, now));
    if (deps.stopping.aborted) {
      // A graceful stop lets the open poll return rather than abort it (an aborted poll strands
      // what SQS already handed out): hand these back at once.
      deps.capacity.returnSlots(count);
      await deps.onReceivedWhileStopping(leases);
      break;
    }
    // Held first, then the reservation returned: capacity never counts these messages twice or not at all.
    deps.onReceived(queueUrl, leases, count);
    deps.capacity.returnSlots(count);
  }
}
