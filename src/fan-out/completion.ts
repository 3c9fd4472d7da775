import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type Envelope, encodeEnvelope, envelopeAttributes } from '../core/envelope.js';
import type { CompletionSpec, FanOutStatus, JobStore } from '../ports/job-store.js';
import type { QueuePort } from '../ports/queue.js';
import { isFifoQueue } from '../core/queue-url.js';

/** What a fan-out's completion job gets (merged over the `args` given to onComplete). */
export const fanOutResultSchema = z.object({
  parentId: z.string(),
  total: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
export type FanOutResult = z.output<typeof fanOutResultSchema>;

/**
 * A job id made from another: `<id>.<suffix>` while it fits the 128-character limit, else a hash
 * of the pair. Deterministic, so a resumed fan-out sends its children (and its completion) under
 * the same ids, and the dedupe lock and the per-child counters see them as the same jobs.
 */
export function derivedJobId(jobId: string, suffix: string): string {
  const plain = `${jobId}.${suffix}`;
  return plain.length <= 128 ? plain : `${createHash('sha256').update(jobId).digest('hex').slice(0, 40)}.${suffix}`.slice(0, 128);
}

/**
 * Send a fan-out's completion job (once claimed in the store), then mark it sent. Its job id is
 * derived from the parent's, so a second send after a crash between the two steps is a duplicate
 * the dedupe lock drops.
 */
export async function sendCompletion(
  sqs: QueuePort,
  store: JobStore,
  parentId: string,
  spec: CompletionSpec,
  status: Pick<FanOutStatus, 'total' | 'succeeded' | 'failed'>,
): Promise<void> {
  if (spec.job !== '') {
    const result: FanOutResult = { parentId, total: status.total, succeeded: status.succeeded, failed: status.failed };
    const envelope: Envelope = {
      v: 1,
      id: derivedJobId(parentId, 'done'),
      job: spec.job,
      args: { ...spec.args, ...result },
      enqueuedAt: new Date().toISOString(),
    };
    const fifo = isFifoQueue(spec.queueUrl);
    await sqs.send(spec.queueUrl, {
      body: encodeEnvelope(envelope),
      attributes: envelopeAttributes(envelope),
      ...(fifo ? { groupId: parentId.slice(0, 128), deduplicationId: envelope.id } : {}),
    });
  }
  await store.completionSent(parentId);
}
