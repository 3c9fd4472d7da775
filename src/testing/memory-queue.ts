import { randomUUID } from 'node:crypto';
import type { QueueCounts } from '../ports/queue-admin.js';
import type { DeadLetterTarget, QueuePort } from '../ports/queue.js';
import { SQS_MAX_MESSAGE_BYTES } from '../core/sqs-limits.js';
import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../core/message.js';

interface Stored {
  readonly messageId: string;
  readonly body: string;
  readonly attributes: OutgoingMessage['attributes'];
  readonly groupId: string | undefined;
  readonly sentAt: number;
  readonly awsTraceHeader: string | undefined;
  visibleAt: number;
  receiveCount: number;
  /** The receipt handle of the latest receive: older ones no longer hold the message (as ElasticMQ and AWS answer). */
  receiptHandle: string | undefined;
}

/**
 * An SQS queue in memory, for tests that hand the worker a queue port: visibility, receive counts,
 * per-message delays, stale receipt handles refused, a redrive policy per queue. It passes the same
 * contract as the SDK adapter on a real server (test/contracts/queue-port.test.ts). No FIFO
 * ordering or deduplication.
 */
export class MemoryQueue implements QueuePort {
  readonly #queues = new Map<string, Stored[]>();
  readonly #redrive = new Map<string, DeadLetterTarget>();

  /** Make a queue (and say where its redrive policy sends messages). Answers its URL. */
  create(name: string, redrive?: DeadLetterTarget): string {
    const url = `http://memory.invalid/000000000000/${name}`;
    this.#queues.set(url, []);
    if (redrive !== undefined) this.#redrive.set(url, redrive);
    return url;
  }

  async receive(
    queueUrl: string,
    max: number,
    waitSeconds: number,
    visibilityTimeout: number,
    signal?: AbortSignal,
  ): Promise<ReceivedMessage[]> {
    const deadline = Date.now() + waitSeconds * 1000;
    for (;;) {
      // Like a network call, always let timers run before answering (a short poll on an empty
      // queue would otherwise be a loop of microtasks that starves the process).
      await new Promise((r) => setImmediate(r));
      // Aborted: nothing is received, as with the SDK (which drops the answer).
      if (signal?.aborted) throw Object.assign(new Error('the receive was aborted'), { name: 'AbortError' });
      const now = Date.now();
      const got = this.#queue(queueUrl)
        .filter((m) => m.visibleAt <= now)
        .slice(0, max);
      if (got.length > 0 || now >= deadline) {
        return got.map((m) => {
          m.receiveCount++;
          m.visibleAt = now + visibilityTimeout * 1000;
          m.receiptHandle = randomUUID();
          return {
            queueUrl,
            messageId: m.messageId,
            receiptHandle: m.receiptHandle,
            body: m.body,
            receiveCount: m.receiveCount,
            sentAt: m.sentAt,
            groupId: m.groupId,
            attributes: m.attributes,
            ...(m.awsTraceHeader === undefined ? {} : { awsTraceHeader: m.awsTraceHeader }),
          };
        });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async deleteBatch(queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    const q = this.#queue(queueUrl);
    return entries.flatMap((e) => {
      const i = q.findIndex((m) => m.receiptHandle === e.receiptHandle);
      if (i === -1) return [stale(e)];
      q.splice(i, 1);
      return [];
    });
  }

  async changeVisibilityBatch(queueUrl: string, entries: readonly (BatchEntry & { visibilityTimeout: number })[]): Promise<BatchFailure[]> {
    const q = this.#queue(queueUrl);
    const now = Date.now();
    return entries.flatMap((e) => {
      const m = q.find((x) => x.receiptHandle === e.receiptHandle && x.visibleAt > now);
      if (m === undefined) return [stale(e)];
      m.visibleAt = now + e.visibilityTimeout * 1000;
      return [];
    });
  }

  async send(queueUrl: string, message: OutgoingMessage): Promise<{ messageId: string }> {
    const now = Date.now();
    const messageId = randomUUID();
    this.#queue(queueUrl).push({
      messageId,
      body: message.body,
      attributes: message.attributes,
      groupId: message.groupId,
      sentAt: now,
      awsTraceHeader: message.awsTraceHeader,
      visibleAt: now + (message.delaySeconds ?? 0) * 1000,
      receiveCount: 0,
      receiptHandle: undefined,
    });
    return { messageId };
  }

  async sendBatch(
    queueUrl: string,
    entries: readonly { readonly id: string; readonly message: OutgoingMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }> {
    const sent: { id: string; messageId: string }[] = [];
    for (const e of entries) sent.push({ id: e.id, ...(await this.send(queueUrl, e.message)) });
    return { sent, failed: [] };
  }

  /** Every queue here takes SQS's largest message. */
  async maximumMessageBytes(queueUrl: string): Promise<number> {
    this.#queue(queueUrl);
    return SQS_MAX_MESSAGE_BYTES;
  }

  async deadLetterTarget(queueUrl: string): Promise<DeadLetterTarget | undefined> {
    this.#queue(queueUrl);
    return this.#redrive.get(queueUrl);
  }

  /** The queue's counts, as SQS's GetQueueAttributes gives them (what admission samples). */
  async counts(queueUrl: string): Promise<QueueCounts> {
    const now = Date.now();
    const all = this.#queue(queueUrl);
    const waiting = all.filter((m) => m.visibleAt > now);
    const delayed = waiting.filter((m) => m.receiveCount === 0).length;
    return { visible: all.length - waiting.length, inFlight: waiting.length - delayed, delayed };
  }

  /** What a queue holds now, for a test's checks (not part of the port; receives nothing). */
  peek(
    queueUrl: string,
  ): { messageId: string; body: string; attributes: OutgoingMessage['attributes']; receiveCount: number; visibleInMs: number }[] {
    const now = Date.now();
    return this.#queue(queueUrl).map((m) => ({
      messageId: m.messageId,
      body: m.body,
      attributes: m.attributes,
      receiveCount: m.receiveCount,
      visibleInMs: Math.max(0, m.visibleAt - now),
    }));
  }

  #queue(url: string): Stored[] {
    const q = this.#queues.get(url);
    if (q === undefined) throw Object.assign(new Error(`The specified queue does not exist: ${url}`), { name: 'QueueDoesNotExist' });
    return q;
  }
}

function stale(e: BatchEntry): BatchFailure {
  return {
    id: e.id,
    code: 'ReceiptHandleIsInvalid',
    message: `the receipt handle ${e.receiptHandle} no longer holds a message`,
    kind: 'lease-lost',
  };
}
