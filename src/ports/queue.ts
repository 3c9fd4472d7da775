/**
 * The queue port: the SQS calls the worker makes, in the worker's own words. Nothing of the AWS
 * SDK appears here; src/adapters/sqs-queue.ts implements it over the SDK, and a test may hand the
 * worker any other implementation (`createWorker({ queue })`).
 */

/** A message attribute, as SQS stores it. */
export interface MessageAttribute {
  readonly DataType: string;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

export type MessageAttributes = Readonly<Record<string, MessageAttribute>>;

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
  readonly attributes: MessageAttributes;
}

export interface OutgoingMessage {
  readonly body: string;
  readonly attributes: MessageAttributes;
  readonly groupId?: string | undefined;
  readonly deduplicationId?: string | undefined;
  /** 0-900; standard queues only. */
  readonly delaySeconds?: number | undefined;
}

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

export interface BatchFailure {
  readonly id: string;
  readonly code: string;
  readonly message: string;
  readonly kind: FailureKind;
}

/** Where SQS's redrive policy sends a queue's messages, and after how many receives. */
export interface DeadLetterTarget {
  readonly deadLetterQueueUrl: string;
  readonly maxReceiveCount: number;
}

export interface QueuePort {
  /**
   * Long-poll for up to `max` messages. When `signal` aborts, end at once: reject (an AbortError,
   * as the SDK does) or answer what was received. The server may still hand a message to the
   * abandoned poll; it comes back after `visibilityTimeout`, one receive spent.
   */
  receive(queueUrl: string, max: number, waitSeconds: number, visibilityTimeout: number, signal?: AbortSignal): Promise<ReceivedMessage[]>;
  /** At most 10 entries; answers the entries that failed. */
  deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]>;
  /** At most 10 entries; answers the entries that failed. */
  changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]>;
  send(queueUrl: string, message: OutgoingMessage): Promise<void>;
  /** The queue's redrive policy, or undefined when it has none. */
  deadLetterTarget(queueUrl: string): Promise<DeadLetterTarget | undefined>;
}
