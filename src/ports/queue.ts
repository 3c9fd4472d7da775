/**
 * The queue port: the SQS calls the worker and the producer make, in sqs-jobs' own words. Nothing of the AWS
 * SDK appears here; src/adapters/sqs-queue.ts implements it over the SDK, and a test may hand the
 * worker any other implementation (`createWorker({ queue })`).
 */

import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../core/message.js';

/** Where SQS's redrive policy sends a queue's messages, and after how many receives. */
export interface DeadLetterTarget {
  readonly deadLetterQueueUrl: string;
  readonly maxReceiveCount: number;
}

/**
 * The queue port (see above): the worker's and producer's `queue` option takes one. SqsQueuePort
 * (sqs-jobs/adapters) and MemoryQueue (sqs-jobs/testing) implement it. Batch calls answer the
 * entries that failed; a call that fails as a whole rejects.
 */
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
  /** Send one message; answers its MessageId. */
  send(queueUrl: string, message: OutgoingMessage): Promise<{ messageId: string }>;
  /** At most 10 entries to one queue; answers what was sent (by entry id) and the entries that failed. */
  sendBatch(
    queueUrl: string,
    entries: readonly { readonly id: string; readonly message: OutgoingMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }>;
  /** The largest message the queue accepts, in bytes (its MaximumMessageSize). */
  maximumMessageBytes(queueUrl: string): Promise<number>;
  /** The queue's redrive policy, or undefined when it has none. */
  deadLetterTarget(queueUrl: string): Promise<DeadLetterTarget | undefined>;
}
