import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type MessageAttributeValue,
  type MessageSystemAttributeName,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetterTarget, QueuePort } from '../ports/queue.js';
import type { BatchEntry, BatchFailure, MessageAttributes, OutgoingMessage, ReceivedMessage } from '../core/message.js';
import { parseRedrivePolicy, SqsQueueAdmin } from './sqs-admin.js';
import { classifyFailure } from '../core/sqs-batch.js';
import { SQS_DEFAULT_MESSAGE_BYTES } from '../core/sqs-limits.js';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * QueuePort over the AWS SDK. Receives go through `pollClient`, everything else through
 * `controlClient`: two socket pools, so 20-second long polls never delay deletes or heartbeats.
 */
/**
 * What a worker's receive asks SQS for with each message, besides its body: the system attributes
 * sqs-jobs reads (receive count, sent time, FIFO group, X-Ray trace header) and every message
 * attribute. Made once, not per receive.
 */
export const RECEIVE_ATTRIBUTES: { MessageSystemAttributeNames: MessageSystemAttributeName[]; MessageAttributeNames: string[] } = {
  MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'MessageGroupId', 'AWSTraceHeader'],
  MessageAttributeNames: ['All'],
};

export class SqsQueuePort implements QueuePort {
  readonly #admin: SqsQueueAdmin;

  /** `controlClient` defaults to `pollClient` (one socket pool: fine for producers and tools, not for a busy worker). */
  constructor(
    private readonly pollClient: SQSClient,
    private readonly controlClient: SQSClient = pollClient,
  ) {
    this.#admin = new SqsQueueAdmin(controlClient);
  }

  async receive(
    queueUrl: string,
    max: number,
    waitSeconds: number,
    visibilityTimeout: number,
    signal?: AbortSignal,
  ): Promise<ReceivedMessage[]> {
    const out = await this.pollClient.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: visibilityTimeout,
        ...RECEIVE_ATTRIBUTES,
      }),
      // No options without a signal: a call with options is resolved anew (clientConfig's cacheMiddleware).
      signal === undefined ? undefined : { abortSignal: signal },
    );
    return (out.Messages ?? []).map((m) => ({
      queueUrl,
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1),
      sentAt: Number(m.Attributes?.SentTimestamp ?? Date.now()),
      groupId: m.Attributes?.MessageGroupId,
      attributes: compactAttributes(m.MessageAttributes),
      awsTraceHeader: m.Attributes?.AWSTraceHeader,
    }));
  }

  async deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    const out = await this.controlClient.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.map((e) => ({ Id: e.id, ReceiptHandle: e.receiptHandle })) }),
    );
    return batchFailures(out.Failed);
  }

  async changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]> {
    const out = await this.controlClient.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: entries.map((e) => ({ Id: e.id, ReceiptHandle: e.receiptHandle, VisibilityTimeout: e.visibilityTimeout })),
      }),
    );
    return batchFailures(out.Failed);
  }

  async send(queueUrl: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    const out = await this.controlClient.send(new SendMessageCommand({ QueueUrl: queueUrl, ...toSdkMessage(message) }));
    return { messageId: out.MessageId ?? '' };
  }

  async sendBatch(
    queueUrl: string,
    entries: readonly { readonly id: string; readonly message: OutgoingMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }> {
    const out = await this.controlClient.send(
      new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.map((e) => ({ Id: e.id, ...toSdkMessage(e.message) })) }),
    );
    return {
      sent: (out.Successful ?? []).map((s) => ({ id: s.Id ?? '', messageId: s.MessageId ?? '' })),
      failed: batchFailures(out.Failed),
    };
  }

  async maximumMessageBytes(queueUrl: string): Promise<number> {
    const out = await this.controlClient.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['MaximumMessageSize'] }),
    );
    return Number(out.Attributes?.MaximumMessageSize ?? SQS_DEFAULT_MESSAGE_BYTES);
  }

  /**
   * Read at a worker's start: a server fault or a dropped connection is tried again (4 tries over
   * about 3.5 s, beyond the SDK's own retries), so a passing outage does not stop the worker; an
   * answer about the queue itself (it does not exist, access denied) fails at once.
   */
  async deadLetterTarget(queueUrl: string): Promise<DeadLetterTarget | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.controlClient.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }));
        const policy = parseRedrivePolicy(out.Attributes?.RedrivePolicy);
        if (policy === undefined) return undefined;
        return {
          deadLetterQueueUrl: await this.#admin.urlOfArn(policy.deadLetterTargetArn),
          maxReceiveCount: policy.maxReceiveCount,
        };
      } catch (error) {
        if (attempt >= START_READ_ATTEMPTS || !passing(error)) throw error;
        await sleep(500 * 2 ** (attempt - 1));
      }
    }
  }
}

const START_READ_ATTEMPTS = 4;

/** A server fault (5xx) or no answer at all (a reset or timeout): worth trying again. */
function passing(error: unknown): boolean {
  const e = error as { $fault?: string; $metadata?: { httpStatusCode?: number } };
  return e.$fault === 'server' || e.$metadata?.httpStatusCode === undefined;
}

function toSdkMessage(m: OutgoingMessage) {
  return {
    MessageBody: m.body,
    MessageAttributes: m.attributes as Record<string, MessageAttributeValue>,
    MessageGroupId: m.groupId,
    MessageDeduplicationId: m.deduplicationId,
    DelaySeconds: m.delaySeconds,
    ...(m.awsTraceHeader === undefined
      ? {}
      : { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String' as const, StringValue: m.awsTraceHeader } } }),
  };
}

/**
 * Keep only what an attribute says: the SDK fills in empty StringListValues/BinaryListValues
 * arrays, which would stay in memory for as long as the message is held.
 */
function compactAttributes(attributes: Record<string, MessageAttributeValue> | undefined): MessageAttributes {
  const out: Record<string, MessageAttributes[string]> = {};
  for (const [name, a] of Object.entries(attributes ?? {})) {
    out[name] =
      a.BinaryValue !== undefined
        ? { DataType: a.DataType ?? 'Binary', BinaryValue: a.BinaryValue }
        : { DataType: a.DataType ?? 'String', StringValue: a.StringValue };
  }
  return out;
}

/** An SDK batch answer's `Failed` list in the port's words. */
function batchFailures(failed: { Id?: string; Code?: string; Message?: string; SenderFault?: boolean }[] | undefined): BatchFailure[] {
  return (failed ?? []).map((f) => {
    const code = f.Code ?? 'Unknown';
    return { id: f.Id ?? '', code, message: f.Message ?? '', kind: classifyFailure(code, f.SenderFault ?? false) };
  });
}
