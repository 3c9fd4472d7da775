import type { ReceivedMessage } from '../core/message.js';
import type { QueuePort } from '../ports/queue.js';
import { type DeadLetter, describeDeadLetter, makeVisible, receiveDeadLetters } from './dlq.js';
import { type DeadLetterFilter, matchesFilter } from './dlq-filter.js';

/** A dead letter with the message it was read from (body and every attribute). */
export interface DeadLetterMessage {
  readonly letter: DeadLetter;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** A message's attributes as text, for people: a Binary one as its type, `(Binary)`. */
export function attributeTexts(m: ReceivedMessage): Record<string, string> {
  return Object.fromEntries(Object.entries(m.attributes).map(([k, v]) => [k, v.StringValue ?? `(${v.DataType})`]));
}

export interface ScanResult {
  readonly matches: DeadLetterMessage[];
  /** How many messages were looked at. */
  readonly scanned: number;
  /** Whether the whole DLQ (what was visible) was looked at: false when `limit` or `maxScan` stopped it. */
  readonly complete: boolean;
}

/**
 * Look at the DLQ without consuming it, keeping up to `limit` dead letters the filter matches:
 * receive (each held for a minute so none is seen twice), read, then make every one visible
 * again. Looks at `maxScan` messages at most (default 10,000); stops when one comes back that it
 * has seen (its hold ran out: it has been through the DLQ).
 */
export async function scanDeadLetters(
  queue: QueuePort,
  dlqUrl: string,
  o: { readonly limit?: number; readonly filter?: DeadLetterFilter; readonly maxScan?: number } = {},
): Promise<ScanResult> {
  const limit = o.limit ?? 100;
  const maxScan = o.maxScan ?? 10_000;
  const held = new Map<string, ReceivedMessage>();
  const matches: DeadLetterMessage[] = [];
  const now = Date.now();
  let complete = false;
  try {
    while (matches.length < limit && held.size < maxScan) {
      const batch = await receiveDeadLetters(queue, dlqUrl, o.filter === undefined ? limit - matches.length : 10);
      const fresh = batch.filter((m) => !held.has(m.messageId));
      for (const m of batch) held.set(m.messageId, m); // the latest receipt of each, to make it visible
      for (const m of fresh) {
        const letter = describeDeadLetter(m);
        if (matches.length < limit && (o.filter === undefined || matchesFilter(letter, o.filter, now))) {
          matches.push({ letter, body: m.body, attributes: attributeTexts(m) });
        }
      }
      if (fresh.length < batch.length || batch.length === 0) {
        complete = true;
        break;
      }
    }
    return { matches, scanned: held.size, complete };
  } finally {
    // Not fatal: a message not made visible here comes back when its minute is up.
    await makeVisible(queue, dlqUrl, [...held.values()]).catch(() => {});
  }
}

/** Up to `limit` dead letters (those the filter matches), without consuming any. */
export async function listDeadLetters(queue: QueuePort, dlqUrl: string, limit = 100, filter?: DeadLetterFilter): Promise<DeadLetter[]> {
  return (await scanDeadLetters(queue, dlqUrl, { limit, ...(filter === undefined ? {} : { filter }) })).matches.map((m) => m.letter);
}
