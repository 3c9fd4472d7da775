import type { BatchFailure } from '../core/message.js';
import { toError } from '../core/errors.js';
import { ENTRY_ATTEMPTS, type ItemFailure, retryTransient } from '../core/sqs-batch.js';

/** What a batch call answers: the entries it took and those it refused, by the ids it was given. */
export interface BatchAnswer {
  readonly sent: readonly { readonly id: string; readonly messageId: string }[];
  readonly failed: readonly BatchFailure[];
}

/** An entry it could not send, by its index in the caller's list. */
interface UnsentEntry {
  readonly index: number;
  readonly code: string;
  readonly message: string;
}

/**
 * Send entries (indexes into the caller's list) in one batch call, the entry ids being the indexes
 * as strings; entries refused for a transient reason are sent again (retryTransient: `attempts`
 * tries in all). An entry the answer names neither way was not confirmed sent: it is reported,
 * never assumed gone. A call that throws (the SDK has retried it already) fails every entry in it,
 * and is not made again (it may have been taken).
 */
export async function sendWithRetries(
  indexes: readonly number[],
  call: (indexes: readonly number[]) => Promise<BatchAnswer>,
  attempts = ENTRY_ATTEMPTS,
): Promise<{ sent: { index: number; messageId: string }[]; failed: UnsentEntry[] }> {
  const sent: { index: number; messageId: string }[] = [];
  const refusal = (index: number, code: string, message: string): ItemFailure<number> => ({
    item: index,
    failure: { id: String(index), code, message, kind: 'fatal' },
  });
  const failed = await retryTransient(
    indexes,
    async (pending) => {
      const unanswered = new Set(pending);
      const refused: ItemFailure<number>[] = [];
      try {
        const out = await call(pending);
        for (const ok of out.sent) {
          const index = Number(ok.id);
          if (unanswered.delete(index)) sent.push({ index, messageId: ok.messageId });
        }
        for (const bad of out.failed) {
          const index = Number(bad.id);
          if (unanswered.delete(index)) refused.push({ item: index, failure: bad });
        }
        for (const index of unanswered) refused.push(refusal(index, 'NoAnswer', 'the batch answer did not name this entry'));
      } catch (error) {
        const e = toError(error);
        return pending.map((index) => refusal(index, e.name, e.message));
      }
      return refused;
    },
    attempts,
  );
  return { sent, failed: failed.map(({ item, failure }) => ({ index: item, code: failure.code, message: failure.message || 'refused' })) };
}
