import type { BatchFailure } from '../core/message.js';
import { toError } from '../core/errors.js';
import { sleep } from '../core/sleep.js';

/** Tries per entry of a batch call (SendMessageBatch, PublishBatch): transient refusals are sent again. */
const BATCH_SEND_ATTEMPTS = 3;

/** What a batch call answers: the entries it took and those it refused, by the ids it was given. */
export interface BatchAnswer {
  readonly sent: readonly { readonly id: string; readonly messageId: string }[];
  readonly failed: readonly BatchFailure[];
}

/** An entry it could not send, by its index in the caller's list. */
export interface UnsentEntry {
  readonly index: number;
  readonly code: string;
  readonly message: string;
}

/**
 * Send entries (indexes into the caller's list) in one batch call, the entry ids being the indexes
 * as strings; entries refused for a transient reason are sent again, `attempts` tries in all (3)
 * with a growing pause. An entry the answer names neither way was not confirmed sent: it is reported,
 * never assumed gone. A call that throws (the SDK has retried it already) fails every entry in it.
 */
export async function sendWithRetries(
  indexes: readonly number[],
  call: (indexes: readonly number[]) => Promise<BatchAnswer>,
  attempts = BATCH_SEND_ATTEMPTS,
): Promise<{ sent: { index: number; messageId: string }[]; failed: UnsentEntry[] }> {
  const sent: { index: number; messageId: string }[] = [];
  const failed: UnsentEntry[] = [];
  let pending = indexes;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const unanswered = new Set(pending);
    const retry: number[] = [];
    try {
      const out = await call(pending);
      for (const ok of out.sent) {
        const index = Number(ok.id);
        if (unanswered.delete(index)) sent.push({ index, messageId: ok.messageId });
      }
      for (const bad of out.failed) {
        const index = Number(bad.id);
        if (!unanswered.delete(index)) continue;
        if (bad.kind === 'transient' && attempt < attempts) retry.push(index);
        else failed.push({ index, code: bad.code, message: bad.message || 'refused' });
      }
      for (const index of unanswered) failed.push({ index, code: 'NoAnswer', message: 'the batch answer did not name this entry' });
    } catch (error) {
      const e = toError(error);
      for (const index of pending) failed.push({ index, code: e.name, message: e.message });
    }
    if (retry.length > 0) await sleep(100 * 2 ** attempt);
    pending = retry;
  }
  return { sent, failed };
}
