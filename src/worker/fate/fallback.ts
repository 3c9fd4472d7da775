/** How settle goes on when one of its acts fails: hand the message back after `seconds`. */
export interface Fallback {
  readonly seconds: number;
  readonly reason: string;
  /** It is in the DLQ already: if it must be re-sent, the copy is marked so, to be counted and never run. */
  readonly deadLettered: boolean;
}

/** A fan-out child comes back this soon when its count failed (within the dead-letter marker's life). */
export const COUNT_RETRY_SECONDS = 5;

/**
 * If an act of settle fails: the DLQ send (the message stays, back after one visibility timeout),
 * or recording a fan-out child's end (back soon to be counted, marked when it is in the DLQ already).
 */
export function ifFails(act: 'dead-letter send' | 'count' | 'count after dead-letter', visibilityTimeoutSeconds: number): Fallback {
  switch (act) {
    case 'dead-letter send':
      return { seconds: visibilityTimeoutSeconds, reason: 'the DLQ send failed', deadLettered: false };
    case 'count':
      return { seconds: COUNT_RETRY_SECONDS, reason: 'its fan-out count failed', deadLettered: false };
    case 'count after dead-letter':
      return { seconds: COUNT_RETRY_SECONDS, reason: 'its fan-out count failed', deadLettered: true };
  }
}
