import {
  ChangeMessageVisibilityBatchCommand,
  GetQueueAttributesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { batchFailures } from '../adapters/sqs-queue.js';
import { inBatches } from '../core/sqs-batch.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../core/envelope.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE } from '../core/dead-letter.js';

/** A dead-lettered message as an operator sees it. */
export interface DeadLetter {
  readonly messageId: string;
  readonly jobName: string | undefined;
  readonly jobId: string | undefined;
  readonly tenant: string | undefined;
  /** The attempt it failed on (ours), else SQS's receive count from before it was moved. */
  readonly receiveCount: number | undefined;
  /** Our reason code; `redrive` when SQS moved it after maxReceiveCount. */
  readonly reason: string;
  readonly error: string | undefined;
  readonly deadLetteredAt: string | undefined;
  readonly sourceQueueUrl: string | undefined;
}

const HOLD_SECONDS = 60;

function attr(m: Message, name: string): string | undefined {
  return m.MessageAttributes?.[name]?.StringValue;
}

/** What a DLQ message says about itself: our attributes first, the envelope second. */
export function describeDeadLetter(m: Message): DeadLetter {
  let body: { id?: unknown; job?: unknown; tenant?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(m.Body ?? '');
    if (typeof parsed === 'object' && parsed !== null) body = parsed as typeof body;
  } catch {
    // poison: the attributes are all there is
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const count = attr(m, ATTR_DLQ_RECEIVE_COUNT);
  return {
    messageId: m.MessageId ?? '',
    jobName: attr(m, ATTR_JOB) ?? str(body.job),
    jobId: attr(m, ATTR_JOB_ID) ?? str(body.id),
    tenant: str(body.tenant),
    receiveCount: count !== undefined ? Number(count) : undefined,
    reason: attr(m, ATTR_DLQ_REASON) ?? 'redrive',
    error: attr(m, ATTR_DLQ_ERROR),
    deadLetteredAt: attr(m, ATTR_DLQ_AT),
    sourceQueueUrl: attr(m, ATTR_DLQ_SOURCE),
  };
}

/** Receive up to `max` (at most 10) DLQ messages, each held (invisible) for `holdSeconds`. */
export async function receiveDeadLetters(sqs: SQSClient, queueUrl: string, max: number, holdSeconds = HOLD_SECONDS): Promise<Message[]> {
  const out = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: Math.min(10, max),
      WaitTimeSeconds: 1,
      VisibilityTimeout: holdSeconds,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

/** Make held messages visible again at once. */
export function makeVisible(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<void> {
  return holdFor(sqs, queueUrl, messages, 0);
}

/** Set how long held messages stay hidden from now (0: visible at once). */
export async function holdFor(sqs: SQSClient, queueUrl: string, messages: readonly Message[], seconds: number): Promise<void> {
  const failed = await inBatches(messages, async (batch) => {
    const out = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: seconds })),
      }),
    );
    return batchFailures(out.Failed);
  });
  // Not fatal: a message not changed here comes back when its current hold ends.
  if (failed.length > 0) throw new Error(`${failed.length} message(s) keep their current hold: ${failed[0]!.failure.code}`);
}

/**
 * Look at up to `limit` dead letters without consuming them: receive (held for a minute so none is
 * seen twice), read, then make every one visible again.
 */
export async function listDeadLetters(sqs: SQSClient, dlqUrl: string, limit = 100): Promise<DeadLetter[]> {
  const held: Message[] = [];
  try {
    while (held.length < limit) {
      const batch = await receiveDeadLetters(sqs, dlqUrl, limit - held.length);
      if (batch.length === 0) break;
      held.push(...batch);
    }
    return held.map(describeDeadLetter);
  } finally {
    await makeVisible(sqs, dlqUrl, held);
  }
}

/** How many messages the DLQ holds as SQS counts them: visible, and in flight (held, so not listable now). */
export async function countDeadLetters(sqs: SQSClient, dlqUrl: string): Promise<{ visible: number; inFlight: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: dlqUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  const a = out.Attributes ?? {};
  return { visible: Number(a.ApproximateNumberOfMessages ?? 0), inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) };
}

/** Delete every message in the DLQ (SQS allows one purge per queue per 60 s). */
export async function purgeDeadLetters(sqs: SQSClient, dlqUrl: string): Promise<void> {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
}
