import type { BatchEntry, BatchFailure, OutgoingMessage } from '../../core/message.js';
import type { QueuePort } from '../../ports/queue.js';
import type { DeleteCoalescer, ResendCoalescer, VisibilityCoalescer } from './coalescers.js';

/**
 * What may be done to a held message: delete it, make it visible again, re-send a copy, send one
 * to the DLQ. Only the fate holds it (settle.ts acts; conclude.ts hands it on): the worker's
 * context, which every other phase gets, has a queue port that only receives, so "only settle acts
 * on a message" follows from the types. Deletes, hand-backs and deferrals go through coalescers,
 * in batch calls.
 */
export interface Acts {
  readonly deletes: DeleteCoalescer;
  readonly visibility: VisibilityCoalescer;
  readonly resends: ResendCoalescer;
  /** One message sent at once: a dead letter, a re-send at the receive limit. */
  send(queueUrl: string, message: OutgoingMessage): Promise<{ messageId: string }>;
  /** Up to 10 messages made visible at once: unstarted ones handed back. */
  changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]>;
}

/** The acts over `sqs` and the coalescers built on it. */
export function actsOn(
  sqs: Pick<QueuePort, 'send' | 'changeVisibilityBatch'>,
  coalescers: Pick<Acts, 'deletes' | 'visibility' | 'resends'>,
): Acts {
  return {
    ...coalescers,
    send: (queueUrl, message) => sqs.send(queueUrl, message),
    changeVisibilityBatch: (queueUrl, entries) => sqs.changeVisibilityBatch(queueUrl, entries),
  };
}

/** The acts' flushes, in the order shutdown runs them (once every message is settled). */
export function flushSteps(acts: Acts): (readonly [string, () => unknown])[] {
  return [
    ['flush re-sends', () => acts.resends.flush()],
    ['flush deletes', () => acts.deletes.flush()],
    ['flush hand-backs', () => acts.visibility.flush()],
  ];
}
