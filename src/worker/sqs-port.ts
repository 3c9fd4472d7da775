import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** One message as the worker sees it. */
export interface ReceivedMessage {
  readonly queueUrl: string;
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** SQS ApproximateReceiveCount: 1 on first delivery. */
  readonly receiveCount: number;
  readonly sentAt: Date;
  readonly groupId: string | undefined;
  readonly attributes: Readonly<Record<string, MessageAttributeValue>>;
}

export interface BatchEntry {
  readonly id: string;
  readonly receiptHandle: string;
}

export interface BatchFailure {
  readonly id: string;
  readonly code: string;
  readonly message: string;
  readonly senderFault: boolean;
}

export interface OutgoingMessage {
  readonly body: string;
  readonly attributes: Record<string, MessageAttributeValue>;
  readonly groupId?: string | undefined;
  readonly deduplicationId?: string | undefined;
  /** 0-900; standard queues only. */
  readonly delaySeconds?: number | undefined;
}

/** The SQS calls the worker makes; nothing else of the SDK reaches the worker's core. */
export interface QueuePort {
  receive(queueUrl: string, max: number, waitSeconds: number, visibilityTimeout: number, signal?: AbortSignal): Promise<ReceivedMessage[]>;
  deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]>;
  changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]>;
  send(queueUrl: string, message: OutgoingMessage): Promise<void>;
}

/** Failure codes that mean this worker no longer holds the message. */
export const LEASE_LOST_CODES: ReadonlySet<string> = new Set([
  'ReceiptHandleIsInvalid',
  'MessageNotInflight',
  'AWS.SimpleQueueService.MessageNotInflight',
  'InvalidParameterValue',
]);

/**
 * QueuePort over the AWS SDK. Receives go through `pollClient`, everything else through
 * `controlClient`: two socket pools, so 20-second long polls never delay deletes or heartbeats.
 */
export class SqsQueuePort implements QueuePort {
  constructor(
    private readonly pollClient: SQSClient,
    private readonly controlClient: SQSClient,
  ) {}

  async receive(queueUrl: string, max: number, waitSeconds: number, visibilityTimeout: number, signal?: AbortSignal): Promise<ReceivedMessage[]> {
    const out = await this.pollClient.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: visibilityTimeout,
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'MessageGroupId'],
        MessageAttributeNames: ['All'],
      }),
      signal === undefined ? {} : { abortSignal: signal },
    );
    return (out.Messages ?? []).map((m) => ({
      queueUrl,
      messageId: m.MessageId ?? '',
      receiptHandle: m.ReceiptHandle ?? '',
      body: m.Body ?? '',
      receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 1),
      sentAt: new Date(Number(m.Attributes?.SentTimestamp ?? Date.now())),
      groupId: m.Attributes?.MessageGroupId,
      attributes: compactAttributes(m.MessageAttributes),
    }));
  }

  async deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    const out = await this.controlClient.send(
      new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.map((e) => ({ Id: e.id, ReceiptHandle: e.receiptHandle })) }),
    );
    return toFailures(out.Failed);
  }

  async changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]> {
    const out = await this.controlClient.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: entries.map((e) => ({ Id: e.id, ReceiptHandle: e.receiptHandle, VisibilityTimeout: e.visibilityTimeout })),
      }),
    );
    return toFailures(out.Failed);
  }

  async send(queueUrl: string, message: OutgoingMessage): Promise<void> {
    await this.controlClient.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: message.body,
        MessageAttributes: message.attributes,
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
        DelaySeconds: message.delaySeconds,
      }),
    );
  }
}

/**
 * Keep only what an attribute says: the SDK fills in empty StringListValues/BinaryListValues
 * arrays, which would stay in memory for as long as the message is held.
 */
function compactAttributes(attributes: Record<string, MessageAttributeValue> | undefined): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, a] of Object.entries(attributes ?? {})) {
    out[name] = a.BinaryValue !== undefined ? { DataType: a.DataType, BinaryValue: a.BinaryValue } : { DataType: a.DataType, StringValue: a.StringValue };
  }
  return out;
}

function toFailures(failed: { Id?: string; Code?: string; Message?: string; SenderFault?: boolean }[] | undefined): BatchFailure[] {
  return (failed ?? []).map((f) => ({ id: f.Id ?? '', code: f.Code ?? 'Unknown', message: f.Message ?? '', senderFault: f.SenderFault ?? false }));
}
