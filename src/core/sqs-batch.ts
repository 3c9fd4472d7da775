import type { BatchFailure, FailureKind } from './message.js';
import { sleep } from './sleep.js';
import { SQS_BATCH_LIMIT } from './sqs-limits.js';

/** SQS takes at most 10 entries in one batch call. */

/** Codes that mean a receipt handle no longer holds its message. */
const LEASE_LOST_CODES: ReadonlySet<string> = new Set([
  'ReceiptHandleIsInvalid',
  'MessageNotInflight',
  'AWS.SimpleQueueService.MessageNotInflight',
  'InvalidParameterValue',
  // LocalStack: "Message does not exist or is not available for visibility timeout change"
  'InvalidParameterValueException',
]);

/** What one failed batch entry means for the caller (see FailureKind). */
export function classifyFailure(code: string, senderFault: boolean): FailureKind {
  if (LEASE_LOST_CODES.has(code)) return 'lease-lost';
  return senderFault ? 'fatal' : 'transient';
}

/** `items` in runs of at most `size`. */
export function chunk<T>(items: readonly T[], size = SQS_BATCH_LIMIT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** `items` in runs of at most `maxItems` (SQS: 10) whose sizes add up to at most `maxBytes` (an item larger than that runs alone). */
export function chunkBySize<T>(items: readonly T[], size: (item: T) => number, maxBytes: number, maxItems = SQS_BATCH_LIMIT): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length === maxItems || (current.length > 0 && bytes + n > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}

export interface ItemFailure<T> {
  readonly item: T;
  readonly failure: BatchFailure;
}

/**
 * Send `items` in batch calls of at most 10, all at once; `call` gets a chunk and answers the
 * failed entries, whose ids are each entry's index in the chunk as a string. Answers every item
 * that failed: those SQS refused, and every item of a call that threw (as `transient`).
 */
export async function inBatches<T>(
  items: readonly T[],
  call: (batch: readonly T[]) => Promise<readonly BatchFailure[]>,
  chunker: (items: readonly T[]) => T[][] = chunk,
): Promise<ItemFailure<T>[]> {
  const answers = await Promise.all(
    chunker(items).map(async (batch): Promise<ItemFailure<T>[]> => {
      try {
        const failures = await call(batch);
        return failures.flatMap((failure) => {
          const item = batch[Number(failure.id)];
          return item === undefined ? [] : [{ item, failure }];
        });
      } catch (error) {
        const e = error instanceof Error ? error : new Error(String(error));
        return batch.map((item, i) => ({ item, failure: { id: String(i), code: e.name, message: e.message, kind: 'transient' as const } }));
      }
    }),
  );
  return answers.flat();
}

/** Tries per entry of a batch call (SendMessageBatch, DeleteMessageBatch, PublishBatch...): one refused for a transient reason is sent again. */
export const ENTRY_ATTEMPTS = 3;

/**
 * The one retry of batch entries (the worker's coalescers and the producer's batch sends use it):
 * `call` for `items`, then again for those it answers failed for a transient reason, `attempts`
 * tries in all, pausing 200 ms, then 400 ms. Which failures are transient is `call`'s to say (a
 * call that threw may have been taken: a sender answers those as fatal). Answers what still failed.
 */
export async function retryTransient<T>(
  items: readonly T[],
  call: (items: readonly T[]) => Promise<readonly ItemFailure<T>[]>,
  attempts = ENTRY_ATTEMPTS,
): Promise<ItemFailure<T>[]> {
  const failed: ItemFailure<T>[] = [];
  let pending = items;
  for (let attempt = 1; pending.length > 0; attempt++) {
    const retry: T[] = [];
    for (const f of await call(pending)) {
      if (f.failure.kind === 'transient' && attempt < attempts) retry.push(f.item);
      else failed.push(f);
    }
    if (retry.length > 0) await sleep(100 * 2 ** attempt);
    pending = retry;
  }
  return failed;
}

/** Group leases (or anything holding a message) by the queue they came from. */
export function groupByQueue<T extends { message: { queueUrl: string } }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(item.message.queueUrl);
    if (list === undefined) groups.set(item.message.queueUrl, [item]);
    else list.push(item);
  }
  return groups;
}
