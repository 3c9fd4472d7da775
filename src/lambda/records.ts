import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../core/message.js';
import type { DeadLetterTarget, QueuePort } from '../ports/queue.js';

/**
 * The queue port as a Lambda invocation's walk sees it. The mapping deletes every record the
 * function does not report failed, so settle's delete is only noted here (no SQS call); every
 * record not deleted is reported failed, and comes back. The rest is SQS as usual: a retry's
 * visibility, a re-sent copy, a dead letter. So success is done; a retry is its visibility set,
 * then failed; a deferral or a dead letter is a send, then done; and a settle cut off midway
 * leaves its record failed: never lost.
 */
export class RecordsQueue implements QueuePort {
  readonly #sqs: QueuePort;
  /** The receipt handles settle deleted in this invocation. */
  readonly #done = new Set<string>();

  constructor(sqs: QueuePort) {
    this.#sqs = sqs;
  }

  /** A new invocation: nothing is done yet. */
  begin(): void {
    this.#done.clear();
  }

  /** Whether settle deleted `m`: the mapping may delete it. */
  isDone(m: Pick<ReceivedMessage, 'receiptHandle'>): boolean {
    return this.#done.has(m.receiptHandle);
  }

  receive(): Promise<ReceivedMessage[]> {
    return Promise.reject(new Error('a Lambda function does not receive: its event source mapping does'));
  }

  async deleteBatch(_queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    for (const e of entries) this.#done.add(e.receiptHandle);
    return [];
  }

  changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]> {
    return this.#sqs.changeVisibilityBatch(queueUrl, entries);
  }

  send(queueUrl: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    return this.#sqs.send(queueUrl, message);
  }

  sendBatch(
    queueUrl: string,
    entries: readonly { readonly id: string; readonly message: OutgoingMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }> {
    return this.#sqs.sendBatch(queueUrl, entries);
  }

  maximumMessageBytes(queueUrl: string): Promise<number> {
    return this.#sqs.maximumMessageBytes(queueUrl);
  }

  deadLetterTarget(queueUrl: string): Promise<DeadLetterTarget | undefined> {
    return this.#sqs.deadLetterTarget(queueUrl);
  }
}
