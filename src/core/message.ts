/**
 * A message as sqs-jobs sees it, received or to be sent, and how one entry of a batch call fails:
 * the words the queue port and everything around it speak. Nothing of the AWS SDK appears here.
 */

/** A message attribute, as SQS stores it. */
export interface MessageAttribute {
  readonly DataType: string;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

/** A message's attributes, by attribute name. */
export type MessageAttributes = Readonly<Record<string, MessageAttribute>>;

/** One message as the worker sees it. */
export interface ReceivedMessage {
  readonly queueUrl: string;
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** SQS ApproximateReceiveCount: 1 on first delivery. */
  readonly receiveCount: number;
  /** SQS SentTimestamp: when it was sent, in ms since the epoch. */
  readonly sentAt: number;
  readonly groupId: string | undefined;
  readonly attributes: MessageAttributes;
  /** The X-Ray trace header SQS keeps as a system attribute (`AWSTraceHeader`), when the sender set one. */
  readonly awsTraceHeader?: string | undefined;
}

/** A message to send; `groupId` and `deduplicationId` are for FIFO queues. */
export interface OutgoingMessage {
  readonly body: string;
  readonly attributes: MessageAttributes;
  readonly groupId?: string | undefined;
  readonly deduplicationId?: string | undefined;
  /** 0-900; standard queues only. */
  readonly delaySeconds?: number | undefined;
  /** The X-Ray trace header to keep as its `AWSTraceHeader` system attribute (a re-send keeps the one it came with). */
  readonly awsTraceHeader?: string | undefined;
}

/** One message of a delete or change-visibility batch call: an entry id unique in the call, and its receipt handle. */
export interface BatchEntry {
  readonly id: string;
  readonly receiptHandle: string;
}

/**
 * Why one entry of a batch call failed: `lease-lost` when the receipt handle no longer holds the
 * message (another consumer has it, or it is gone), `transient` when trying again may work, `fatal`
 * when it will not.
 */
export type FailureKind = 'transient' | 'lease-lost' | 'fatal';

/** One entry of a batch call that failed: its entry id, SQS's error code and message, and the kind of failure. */
export interface BatchFailure {
  readonly id: string;
  readonly code: string;
  readonly message: string;
  readonly kind: FailureKind;
}
