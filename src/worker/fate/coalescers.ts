import type { QueuePort } from '../../ports/queue.js';
import type { BatchEntry, BatchFailure, OutgoingMessage, ReceivedMessage } from '../../core/message.js';
import { chunkBySize, inBatches, retryTransient } from '../../core/sqs-batch.js';
import { SQS_BATCH_LIMIT as BATCH, SQS_DEFAULT_MESSAGE_BYTES } from '../../core/sqs-limits.js';
import { messageSize } from '../../core/sqs-text.js';

/** Why SQS would not take an entry (its code and message), after retries of transient failures; undefined once it did. */
type Refusal = string | undefined;

interface Pending<T> {
  /** The received message the entry is for (deleted, made visible, or re-sent). */
  readonly message: ReceivedMessage;
  /** What the call needs beyond it: a visibility timeout, a copy to send. */
  readonly data: T;
  /** Counted in onConfirmed (a delete that ends the job, not one that follows a re-send of it). */
  readonly counted: boolean;
  readonly resolve: (refusal: Refusal) => void;
}

interface CoalescerOptions {
  readonly sqs: QueuePort;
  /** How long an entry may wait for nine others before its batch is sent anyway. */
  readonly flushMs: number;
  /** An entry SQS would not take (after retries of transient failures), with the reason; else its caller reports it. */
  readonly onFailure?: (message: ReceivedMessage, reason: string) => void;
  /** How many counted entries of a queue SQS confirmed, after each call. */
  readonly onConfirmed?: (queueUrl: string, count: number) => void;
}

/**
 * Coalesces per-message SQS calls into their batch forms: as soon as 10 entries are ready for a
 * queue, or `flushMs` after the first one (at once: submitNow). A failed entry is retried when
 * the failure is transient (retryTransient); every entry's promise resolves: to undefined once SQS
 * confirmed it, else to why not.
 */
abstract class Coalescer<T> {
  readonly #o: CoalescerOptions;
  readonly #pending = new Map<string, Pending<T>[]>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: CoalescerOptions) {
    this.#o = options;
  }

  /** One batch call for `entries` (at most 10, ids their index as a string): the entries that failed. */
  protected abstract call(
    sqs: QueuePort,
    queueUrl: string,
    entries: readonly (BatchEntry & { readonly data: T })[],
  ): Promise<BatchFailure[]>;

  /** The bytes an entry adds to its batch's payload (SQS limits a batch's total); 0 when not counted. */
  protected bytes(_data: T): number {
    return 0;
  }

  protected submit(message: ReceivedMessage, data: T, counted: boolean): Promise<Refusal> {
    const answer = this.#add(message, data, counted);
    if (this.#pending.size > 0) this.#timer ??= setTimeout(() => this.#sendAll(), this.#o.flushMs);
    return answer;
  }

  /** Entries sent at once, ten to a call per queue, not waiting for others. */
  protected submitNow(entries: readonly { readonly message: ReceivedMessage; readonly data: T }[]): Promise<Refusal>[] {
    const answers = entries.map((e) => this.#add(e.message, e.data, false));
    for (const queueUrl of new Set(entries.map((e) => e.message.queueUrl))) this.#send(queueUrl);
    return answers;
  }

  #add(message: ReceivedMessage, data: T, counted: boolean): Promise<Refusal> {
    return new Promise((resolve) => {
      const list = this.#pending.get(message.queueUrl) ?? [];
      list.push({ message, data, counted, resolve });
      this.#pending.set(message.queueUrl, list);
      if (list.length >= BATCH) this.#send(message.queueUrl);
    });
  }

  /** Send everything pending now and wait until every entry has an answer. */
  async flush(): Promise<void> {
    this.#sendAll();
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #sendAll(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const queueUrl of [...this.#pending.keys()]) this.#send(queueUrl);
  }

  #send(queueUrl: string): void {
    const list = this.#pending.get(queueUrl) ?? [];
    this.#pending.delete(queueUrl);
    for (let i = 0; i < list.length; i += BATCH) {
      const call = this.#sendBatch(queueUrl, list.slice(i, i + BATCH)).finally(() => this.#inFlight.delete(call));
      this.#inFlight.add(call);
    }
    if (this.#pending.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  async #sendBatch(queueUrl: string, batch: Pending<T>[]): Promise<void> {
    const failed = await retryTransient(batch, async (pending) => {
      const failed = await inBatches(
        pending,
        (entries) =>
          this.call(
            this.#o.sqs,
            queueUrl,
            entries.map((p, i) => ({ id: String(i), receiptHandle: p.message.receiptHandle, data: p.data })),
          ),
        (items) => chunkBySize(items, (p) => this.bytes(p.data), SQS_DEFAULT_MESSAGE_BYTES),
      );
      const refused = new Set(failed.map((f) => f.item));
      const confirmed = pending.filter((p) => !refused.has(p));
      const counted = confirmed.filter((p) => p.counted).length;
      if (counted > 0) this.#o.onConfirmed?.(queueUrl, counted);
      for (const p of confirmed) p.resolve(undefined);
      return failed;
    });
    for (const { item, failure } of failed) {
      const reason = `${failure.code} ${failure.message}`.trim();
      this.#o.onFailure?.(item.message, reason);
      item.resolve(reason);
    }
  }
}

/** Deletes in DeleteMessageBatch calls (see Coalescer). */
export class DeleteCoalescer extends Coalescer<undefined> {
  /** `ends`: the job ends with this delete (false after a re-send: its copy is still queued). */
  delete(message: ReceivedMessage, ends = true): Promise<boolean> {
    return this.submit(message, undefined, ends).then((refusal) => refusal === undefined);
  }

  protected call(sqs: QueuePort, queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    return sqs.deleteBatch(
      queueUrl,
      entries.map(({ id, receiptHandle }) => ({ id, receiptHandle })),
    );
  }
}

/**
 * The one way a held message is made visible again (after a delay; unstarted ones at once), in
 * ChangeMessageVisibilityBatch calls: a batch job's failed items, or a burst of failing jobs, cost
 * one call per ten instead of one each.
 */
export class VisibilityCoalescer extends Coalescer<number> {
  change(message: ReceivedMessage, seconds: number): Promise<Refusal> {
    return this.submit(message, seconds, false);
  }

  /** Messages made visible at once (unstarted ones handed back), ten to a call. */
  changeNow(messages: readonly ReceivedMessage[], seconds: number): Promise<Refusal>[] {
    return this.submitNow(messages.map((message) => ({ message, data: seconds })));
  }

  protected call(sqs: QueuePort, queueUrl: string, entries: readonly (BatchEntry & { readonly data: number })[]): Promise<BatchFailure[]> {
    return sqs.changeVisibilityBatch(
      queueUrl,
      entries.map(({ id, receiptHandle, data }) => ({ id, receiptHandle, visibilityTimeout: data })),
    );
  }
}

/**
 * The one way a received message is re-sent to its own queue (a job deferred at its tenant's cap or
 * its rate limit, back while a killed run holds its job id, or handed back with no receive left),
 * in SendMessageBatch calls, ten to a call and within SQS's batch payload: a burst of them costs one
 * call per ten instead of one each. A copy SQS refused for a passing reason is sent again; a call
 * that threw is not (it may have been taken).
 */
export class ResendCoalescer extends Coalescer<OutgoingMessage> {
  resend(message: ReceivedMessage, copy: OutgoingMessage): Promise<Refusal> {
    return this.submit(message, copy, false);
  }

  protected override bytes(copy: OutgoingMessage): number {
    return messageSize(copy.body, copy.attributes ?? {});
  }

  protected async call(
    sqs: QueuePort,
    queueUrl: string,
    entries: readonly (BatchEntry & { readonly data: OutgoingMessage })[],
  ): Promise<BatchFailure[]> {
    try {
      const { failed } = await sqs.sendBatch(
        queueUrl,
        entries.map(({ id, data }) => ({ id, message: data })),
      );
      return failed;
    } catch (error) {
      // A call that threw may have been taken (a timeout after SQS sent the copies): sending again
      // could make two copies. Not retried; the caller hands the originals back instead.
      const e = error instanceof Error ? error : new Error(String(error));
      return entries.map(({ id }) => ({ id, code: e.name, message: e.message, kind: 'fatal' as const }));
    }
  }
}
