import type { ReceivedMessage } from '../core/message.js';
import { inBatches } from '../core/sqs-batch.js';
import type { QueuePort } from '../ports/queue.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../core/envelope.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE } from '../core/dead-letter.js';

/** A dead-lettered message as an operator sees it. */
export interface DeadLetter {
  readonly messageId: string;
  readonly jobName: string | undefined;
  readonly jobId: string | undefined;
  /** The event it carries (an event message: the job is its subscriber, named when a worker dead-lettered it). */
  readonly event: string | undefined;
  readonly tenant: string | undefined;
  /** The attempt it failed on (ours), else SQS's receive count from before it was moved. */
  readonly receiveCount: number | undefined;
  /** Our reason code; `redrive` when SQS moved it after maxReceiveCount. */
  readonly reason: string;
  readonly error: string | undefined;
  readonly deadLetteredAt: string | undefined;
  readonly sourceQueueUrl: string | undefined;
  /** When SQS first stored it (a redriven message keeps its original send time). */
  readonly sentAt: string;
}

const HOLD_SECONDS = 60;

function attr(m: ReceivedMessage, name: string): string | undefined {
  return m.attributes[name]?.StringValue;
}

/** What a DLQ message says about itself: our attributes first, the envelope second. */
export function describeDeadLetter(m: ReceivedMessage): DeadLetter {
  let body: { id?: unknown; job?: unknown; event?: unknown; tenant?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(m.body);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as typeof body;
  } catch {
    // poison: the attributes are all there is
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const count = attr(m, ATTR_DLQ_RECEIVE_COUNT);
  return {
    messageId: m.messageId,
    jobName: attr(m, ATTR_JOB) ?? str(body.job),
    jobId: attr(m, ATTR_JOB_ID) ?? str(body.id),
    event: str(body.event),
    tenant: str(body.tenant),
    receiveCount: count !== undefined ? Number(count) : undefined,
    reason: attr(m, ATTR_DLQ_REASON) ?? 'redrive',
    error: attr(m, ATTR_DLQ_ERROR),
    deadLetteredAt: attr(m, ATTR_DLQ_AT),
    sourceQueueUrl: attr(m, ATTR_DLQ_SOURCE),
    sentAt: new Date(m.sentAt).toISOString(),
  };
}

/** Receive up to `max` (at most 10) DLQ messages, each held (invisible) for `holdSeconds`. */
export function receiveDeadLetters(
  queue: QueuePort,
  queueUrl: string,
  max: number,
  holdSeconds = HOLD_SECONDS,
): Promise<ReceivedMessage[]> {
  return queue.receive(queueUrl, Math.min(10, max), 1, holdSeconds);
}

/** Make held messages visible again at once. */
export function makeVisible(queue: QueuePort, queueUrl: string, messages: readonly ReceivedMessage[]): Promise<void> {
  return holdFor(queue, queueUrl, messages, 0);
}

/** Set how long held messages stay hidden from now (0: visible at once). */
export async function holdFor(queue: QueuePort, queueUrl: string, messages: readonly ReceivedMessage[], seconds: number): Promise<void> {
  const failed = await inBatches(messages, (batch) =>
    queue.changeVisibilityBatch(
      queueUrl,
      batch.map((m, i) => ({ id: String(i), receiptHandle: m.receiptHandle, visibilityTimeout: seconds })),
    ),
  );
  // Not fatal: a message not changed here comes back when its current hold ends.
  if (failed.length > 0) throw new Error(`${failed.length} message(s) keep their current hold: ${failed[0]!.failure.code}`);
}
