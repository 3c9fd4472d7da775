import type { DeadLetterTarget, QueuePort } from '../../src/ports/queue.js';
import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../../src/core/message.js';
import { classifyFailure } from '../../src/core/sqs-batch.js';

/** An answer as SQS gives it for one entry; the fake classifies it as the SDK adapter does. */
export interface EntryAnswer {
  readonly code: string;
  readonly message: string;
  readonly senderFault: boolean;
}

/**
 * A QueuePort that records calls and answers from a script: for unit tests of timing and of how
 * the worker treats SQS's answers. What SQS itself decides is tested against moto.
 */
export class FakeQueuePort implements QueuePort {
  readonly visibilityCalls: { queueUrl: string; entries: (BatchEntry & { visibilityTimeout: number })[] }[] = [];
  readonly deleteCalls: { queueUrl: string; entries: BatchEntry[] }[] = [];
  /** Per receipt handle: the failure to answer with, or 'throw' for a failed call. */
  visibilityAnswer: (entry: BatchEntry) => EntryAnswer | 'throw' | undefined = () => undefined;
  deleteAnswer: (entry: BatchEntry, call: number) => EntryAnswer | 'throw' | undefined = () => undefined;
  readonly sendBatchCalls: { queueUrl: string; entries: { id: string; message: OutgoingMessage }[] }[] = [];
  sendAnswer: (message: OutgoingMessage) => EntryAnswer | 'throw' | undefined = () => undefined;

  async receive(): Promise<ReceivedMessage[]> {
    return [];
  }

  async changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]> {
    this.visibilityCalls.push({ queueUrl, entries: [...entries] });
    return this.#answer(entries, (e) => this.visibilityAnswer(e));
  }

  async deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    this.deleteCalls.push({ queueUrl, entries: [...entries] });
    const call = this.deleteCalls.length;
    return this.#answer(entries, (e) => this.deleteAnswer(e, call));
  }

  async send(_queueUrl: string, _message: OutgoingMessage): Promise<{ messageId: string }> {
    return { messageId: 'm-sent' };
  }

  async sendBatch(
    queueUrl: string,
    entries: readonly { readonly id: string; readonly message: OutgoingMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }> {
    this.sendBatchCalls.push({ queueUrl, entries: entries.map((e) => ({ id: e.id, message: e.message })) });
    const failed: BatchFailure[] = [];
    for (const e of entries) {
      const a = this.sendAnswer(e.message);
      if (a === 'throw') throw new Error('connection reset');
      if (a !== undefined) failed.push({ id: e.id, code: a.code, message: a.message, kind: classifyFailure(a.code, a.senderFault) });
    }
    return {
      sent: entries.filter((e) => !failed.some((f) => f.id === e.id)).map((e) => ({ id: e.id, messageId: `sent-${e.id}` })),
      failed,
    };
  }

  async maximumMessageBytes(): Promise<number> {
    return 262_144;
  }

  async deadLetterTarget(): Promise<DeadLetterTarget | undefined> {
    return undefined;
  }

  #answer(entries: readonly BatchEntry[], answer: (e: BatchEntry) => EntryAnswer | 'throw' | undefined): BatchFailure[] {
    const answers = entries.map((e) => ({ e, a: answer(e) }));
    if (answers.some(({ a }) => a === 'throw')) throw new Error('connection reset');
    return answers.flatMap(({ e, a }) =>
      a === undefined || a === 'throw'
        ? []
        : [{ id: e.id, code: a.code, message: a.message, kind: classifyFailure(a.code, a.senderFault) }],
    );
  }
}

export function message(n: number, queueUrl = 'http://127.0.0.1:4566/1/q'): ReceivedMessage {
  return {
    queueUrl,
    messageId: `m${n}`,
    receiptHandle: `rh${n}`,
    body: '{}',
    receiveCount: 1,
    sentAt: Date.now(),
    groupId: undefined,
    attributes: {},
  };
}
