import type { QueuePort } from '../../ports/queue.js';
import type { BatchEntry, BatchFailure, ReceivedMessage } from '../../core/message.js';
import { inBatches } from '../../core/sqs-batch.js';
import { SQS_BATCH_LIMIT as BATCH } from '../../core/sqs-limits.js';
import { sleep } from '../../core/sleep.js';

const ATTEMPTS = 3;

interface Pending {
  readonly message: ReceivedMessage;
  /** Visibility changes only: the new timeout in seconds. */
  readonly seconds: number;
  /** Counted in onConfirmed (a delete that ends the job, not one that follows a re-send of it). */
  readonly counted: boolean;
  readonly resolve: (done: boolean) => void;
}

export interface CoalescerOptions {
  readonly sqs: QueuePort;
  /** How long an entry may wait for nine others before its batch is sent anyway. */
  readonly flushMs: number;
  /** An entry SQS would not take (after retries of transient failures), with the reason. */
  readonly onFailure: (message: ReceivedMessage, reason: string) => void;
  /** How many counted entries of a queue SQS confirmed, after each call. */
  readonly onConfirmed?: (queueUrl: string, count: number) => void;
}

/**
 * Coalesces per-message SQS calls into their batch forms: as soon as 10 entries are ready for a
 * queue, or `flushMs` after the first one. A failed entry is retried when the failure is transient
 * and reported when it is not; every entry's promise resolves, to true once SQS confirmed it.
 */
abstract class Coalescer {
  readonly #o: CoalescerOptions;
  readonly #pending = new Map<string, Pending[]>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: CoalescerOptions) {
    this.#o = options;
  }

  protected abstract call(
    sqs: QueuePort,
    queueUrl: string,
    entries: readonly (BatchEntry & { visibilityTimeout: number })[],
  ): Promise<BatchFailure[]>;

  protected submit(message: ReceivedMessage, seconds: number, counted: boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const list = this.#pending.get(message.queueUrl) ?? [];
      list.push({ message, seconds, counted, resolve });
      this.#pending.set(message.queueUrl, list);
      if (list.length >= BATCH) this.#send(message.queueUrl);
      else this.#timer ??= setTimeout(() => this.#sendAll(), this.#o.flushMs);
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

  async #sendBatch(queueUrl: string, batch: Pending[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const failed = await inBatches(pending, (entries) =>
        this.call(
          this.#o.sqs,
          queueUrl,
          entries.map((p, i) => ({ id: String(i), receiptHandle: p.message.receiptHandle, visibilityTimeout: p.seconds })),
        ),
      );
      const failures = new Map(failed.map((f) => [f.item, f.failure]));
      const retry: Pending[] = [];
      const confirmed = pending.filter((p) => p.counted && !failures.has(p)).length;
      if (confirmed > 0) this.#o.onConfirmed?.(queueUrl, confirmed);
      for (const p of pending) {
        const f = failures.get(p);
        if (f === undefined) p.resolve(true);
        else if (f.kind === 'transient' && attempt < ATTEMPTS) retry.push(p);
        else this.#fail(p, `${f.code} ${f.message}`.trim());
      }
      if (retry.length > 0) await sleep(200 * attempt);
      pending = retry;
    }
  }

  #fail(p: Pending, reason: string): void {
    this.#o.onFailure(p.message, reason);
    p.resolve(false);
  }
}

/** Deletes in DeleteMessageBatch calls (see Coalescer). */
export class DeleteCoalescer extends Coalescer {
  /** `ends`: the job ends with this delete (false after a re-send: its copy is still queued). */
  delete(message: ReceivedMessage, ends = true): Promise<boolean> {
    return this.submit(message, 0, ends);
  }

  protected call(sqs: QueuePort, queueUrl: string, entries: readonly BatchEntry[]): Promise<BatchFailure[]> {
    return sqs.deleteBatch(
      queueUrl,
      entries.map(({ id, receiptHandle }) => ({ id, receiptHandle })),
    );
  }
}

/**
 * Hand-backs (visible again after a delay) in ChangeMessageVisibilityBatch calls: a batch job's
 * failed items, or a burst of failing jobs, cost one call per ten instead of one each.
 */
export class VisibilityCoalescer extends Coalescer {
  change(message: ReceivedMessage, seconds: number): Promise<boolean> {
    return this.submit(message, seconds, false);
  }

  protected call(
    sqs: QueuePort,
    queueUrl: string,
    entries: readonly (BatchEntry & { visibilityTimeout: number })[],
  ): Promise<BatchFailure[]> {
    return sqs.changeVisibilityBatch(queueUrl, entries);
  }
}
