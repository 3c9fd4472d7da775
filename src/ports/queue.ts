/**
 * The queue port: the SQS calls the worker makes, in the worker's own words. Nothing of the AWS
 * SDK appears here; src/adapters/sqs-queue.ts implements it over the SDK, and a test may hand the
 * worker any other implementation (`createWorker({ queue })`).
 */

import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../core/message.js';

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
