import type { OutgoingMessage } from '../../core/message.js';
import type { QueuePort } from '../../ports/queue.js';
import type { DeleteCoalescer, ResendCoalescer, VisibilityCoalescer } from './coalescers.js';

/**
 * What may be done to a held message, one way each: delete it, make it visible again, re-send a
 * copy, send one to the DLQ. Only the fate holds it (settle.ts acts; conclude.ts hands it on): the
 * worker's context, which every other phase gets, has a queue port that only receives, so "only
 * settle acts on a message" follows from the types. All but the dead letter go through coalescers,
 * in batch calls.
 */
export interface Acts {
  readonly deletes: DeleteCoalescer;
  readonly visibility: VisibilityCoalescer;
  readonly resends: ResendCoalescer;
  /** Send a dead letter (built by core/dead-letter.ts) to a DLQ, at once. */
  deadLetter(dlqUrl: string, message: OutgoingMessage): Promise<{ messageId: string }>;
}

/** The acts over `sqs` and the coalescers built on it. */
export function actsOn(sqs: Pick<QueuePort, 'send'>, coalescers: Pick<Acts, 'deletes' | 'visibility' | 'resends'>): Acts {
  return { ...coalescers, deadLetter: (dlqUrl, message) => sqs.send(dlqUrl, message) };
}

/** The acts' flushes, in the order shutdown runs them (once every message is settled). */
export function flushSteps(acts: Acts): (readonly [string, () => unknown])[] {
  return [
    ['flush re-sends', () => acts.resends.flush()],
    ['flush deletes', () => acts.deletes.flush()],
    ['flush hand-backs', () => acts.visibility.flush()],
  ];
}
