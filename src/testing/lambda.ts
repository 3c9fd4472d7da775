import { SQS_RECEIVE_LIMIT } from '../core/sqs-limits.js';
import type { ReceivedMessage } from '../core/message.js';
import type { LambdaHandler, SqsBatchResponse, SqsEventRecord } from '../lambda/event.js';
import type { QueuePort } from '../ports/queue.js';

/** What one delivery to a Lambda handler came to. */
interface LambdaDelivery {
  /** The records handed to the handler (none: the queue had nothing visible, and the handler was not called). */
  readonly records: readonly SqsEventRecord[];
  /** What the handler answered. */
  readonly response: SqsBatchResponse | undefined;
  /** Message ids reported failed: left in the queue, to come back after their visibility timeout. */
  readonly failed: readonly string[];
}

/**
 * Do what Lambda's SQS event source mapping does, once, for a test of your handler: receive up to
 * `batchSize` (at most 10) messages from `queueUrl` on `queue` (a MemoryQueue from sqs-jobs/testing, or
 * any queue port), hand them to `handler` as an SQS event, then delete every record the answer does
 * not name in `batchItemFailures`. A handler that throws fails the whole batch, as on AWS: nothing
 * is deleted, and the error is thrown. `remainingMs` is the time the context says is left (default 30 s).
 */
export async function deliverToLambda(
  handler: LambdaHandler,
  queue: QueuePort,
  queueUrl: string,
  options: { readonly batchSize?: number; readonly remainingMs?: number; readonly visibilityTimeoutSeconds?: number } = {},
): Promise<LambdaDelivery> {
  const batchSize = Math.min(SQS_RECEIVE_LIMIT, Math.max(1, options.batchSize ?? SQS_RECEIVE_LIMIT));
  const messages = await queue.receive(queueUrl, batchSize, 0, options.visibilityTimeoutSeconds ?? 30);
  if (messages.length === 0) return { records: [], response: undefined, failed: [] };
  const records = messages.map((m) => recordOf(m, arnOf(queueUrl)));
  const deadline = Date.now() + (options.remainingMs ?? 30_000);
  const response = await handler({ Records: records }, { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()) });
  const named = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  for (const id of named)
    if (!messages.some((m) => m.messageId === id)) throw new Error(`the handler reported ${id} failed, which is not in the batch`);
  const done = messages.filter((m) => !named.has(m.messageId));
  for (let i = 0; i < done.length; i += SQS_RECEIVE_LIMIT)
    await queue.deleteBatch(
      queueUrl,
      done.slice(i, i + SQS_RECEIVE_LIMIT).map((m, n) => ({ id: String(n), receiptHandle: m.receiptHandle })),
    );
  return { records, response, failed: [...named] };
}

/** The ARN of the queue at `url` (…/<account>/<name>), in us-east-1. */
function arnOf(url: string): string {
  const [name, account] = url.split('/').reverse();
  return `arn:aws:sqs:us-east-1:${account}:${name}`;
}

function recordOf(m: ReceivedMessage, arn: string): SqsEventRecord {
  return {
    messageId: m.messageId,
    receiptHandle: m.receiptHandle,
    body: m.body,
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount),
      SentTimestamp: String(m.sentAt),
      ...(m.groupId === undefined ? {} : { MessageGroupId: m.groupId }),
      ...(m.awsTraceHeader === undefined ? {} : { AWSTraceHeader: m.awsTraceHeader }),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(m.attributes).map(([name, a]) => [
        name,
        a.BinaryValue === undefined
          ? { stringValue: a.StringValue, dataType: a.DataType }
          : { binaryValue: Buffer.from(a.BinaryValue).toString('base64'), dataType: a.DataType },
      ]),
    ),
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: 'us-east-1',
  };
}
