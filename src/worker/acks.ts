import type { QueuePort, ReceivedMessage } from '../ports/queue.js';
import { inBatches, SQS_BATCH_LIMIT as BATCH } from '../sqs-batch.js';
import { sleep } from '../sleep.js';

const ATTEMPTS = 3;

interface Pending {
  readonly message: ReceivedMessage;
  readonly resolve: (deleted: boolean) => void;
}

export interface DeleteBatcherOptions {
  readonly sqs: QueuePort;
  /** How long a delete may wait for nine others before it is sent anyway. */
  readonly flushMs: number;
  /** An entry that could not be deleted: it will be delivered again (and deduped if completed). */
  readonly onFailure: (message: ReceivedMessage, reason: string) => void;
}

/**
 * Deletes messages in DeleteMessageBatch calls: as soon as 10 are ready for a queue, or `flushMs`
 * after the first one. A failed entry is retried when the failure is transient and reported when
 * it is not; every delete() resolves, to true once SQS confirmed it.
 */
export class DeleteBatcher {
  readonly #o: DeleteBatcherOptions;
  readonly #pending = new Map<string, Pending[]>();
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: DeleteBatcherOptions) {
    this.#o = options;
  }

  delete(message: ReceivedMessage): Promise<boolean> {
    return new Promise((resolve) => {
      const list = this.#pending.get(message.queueUrl) ?? [];
      list.push({ message, resolve });
      this.#pending.set(message.queueUrl, list);
      if (list.length >= BATCH) this.#send(message.queueUrl);
      else this.#timer ??= setTimeout(() => this.#sendAll(), this.#o.flushMs);
    });
  }

  /** Send everything pending now and wait until every delete has an answer. */
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
      const call = this.#deleteBatch(queueUrl, list.slice(i, i + BATCH)).finally(() => this.#inFlight.delete(call));
      this.#inFlight.add(call);
    }
    if (this.#pending.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  async #deleteBatch(queueUrl: string, batch: Pending[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const failed = await inBatches(pending, (entries) =>
        this.#o.sqs.deleteBatch(
          queueUrl,
          entries.map((p, i) => ({ id: String(i), receiptHandle: p.message.receiptHandle })),
        ),
      );
      const failures = new Map(failed.map((f) => [f.item, f.failure]));
      const retry: Pending[] = [];
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
