import type { StringAttribute } from '../core/envelope.js';
import type { FailedEntry } from '../core/errors.js';
import type { OutgoingMessage } from '../core/message.js';
import { chunkBySize } from '../core/sqs-batch.js';
import type { QueuePort } from '../ports/queue.js';
import { sendWithRetries } from './batch-retry.js';

/** How many batch calls enqueueMany keeps in flight. */
const BATCH_CONCURRENCY = 4;

/** A job validated and encoded, ready to send. */
export interface PreparedMessage {
  /** The main queue, or the spillover queue when the job's tenant is past its allowance. */
  readonly queueUrl: string;
  readonly jobId: string;
  readonly body: string;
  readonly attributes: Record<string, StringAttribute>;
  readonly size: number;
  readonly delaySeconds: number | undefined;
  /** Kept in the job store until shortly before this time (epoch milliseconds): it is put off beyond SQS's delay. */
  readonly dueMs: number | undefined;
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
  /** Recorded in the job store as `waiting` once sent (the `track` option), with its envelope's time. */
  readonly track: { readonly enqueuedAt: string; readonly parentId: string | undefined; readonly tenant: string | undefined } | undefined;
  /** With admission: what makes a retry of it "the same request" (see admissionKey). */
  readonly admissionKey: string | undefined;
}

/**
 * Send every message in batch calls: grouped by destination queue, each group split by 10 entries
 * and `maxBytes`, up to BATCH_CONCURRENCY calls at once. Answers each message's result by position
 * (undefined where it did not go) and the entries that failed.
 */
export async function sendAll(
  queue: QueuePort,
  messages: readonly PreparedMessage[],
  maxBytes: number,
): Promise<{ results: ({ jobId: string; messageId: string } | undefined)[]; failed: FailedEntry[] }> {
  const results: ({ jobId: string; messageId: string } | undefined)[] = new Array(messages.length);
  const failed: FailedEntry[] = [];
  const chunks: number[][] = [];
  for (const url of new Set(messages.map((m) => m.queueUrl))) {
    const indexes = messages.flatMap((m, i) => (m.queueUrl === url ? [i] : []));
    for (const c of chunkMessages(
      indexes.map((i) => messages[i]!),
      maxBytes,
    ))
      chunks.push(c.map((k) => indexes[k]!));
  }
  let next = 0;
  const sendChunks = async () => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      const outcome = await sendBatch(
        queue,
        chunk.map((i) => ({ index: i, message: messages[i]! })),
      );
      for (const sent of outcome.sent) results[sent.index] = { jobId: messages[sent.index]!.jobId, messageId: sent.messageId };
      failed.push(...outcome.failed);
    }
  };
  await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, chunks.length) }, sendChunks));
  return { results, failed };
}

/**
 * Send one chunk (at most 10 entries, one queue) in one batch call, transient refusals sent again
 * (see sendWithRetries); answers what went and what did not, by index.
 */
export async function sendBatch(
  queue: QueuePort,
  entries: { index: number; message: PreparedMessage }[],
): Promise<{ sent: { index: number; messageId: string }[]; failed: FailedEntry[] }> {
  const byIndex = new Map(entries.map((e) => [e.index, e.message]));
  const { sent, failed } = await sendWithRetries([...byIndex.keys()], (indexes) =>
    queue.sendBatch(
      entries[0]!.message.queueUrl,
      indexes.map((i) => ({ id: String(i), message: outgoing(byIndex.get(i)!) })),
    ),
  );
  return { sent, failed: failed.map((f) => ({ ...f, jobId: byIndex.get(f.index)!.jobId })) };
}

/** A prepared job as the queue port sends it. */
export function outgoing(m: PreparedMessage): OutgoingMessage {
  return { body: m.body, attributes: m.attributes, delaySeconds: m.delaySeconds, groupId: m.groupId, deduplicationId: m.deduplicationId };
}

/** Group message indexes into batches of at most 10 entries and `maxBytes` in total. */
export function chunkMessages(messages: readonly { size: number }[], maxBytes: number): number[][] {
  return chunkBySize(
    messages.map((m, index) => ({ index, size: m.size })),
    (m) => m.size,
    maxBytes,
  ).map((c) => c.map((m) => m.index));
}
