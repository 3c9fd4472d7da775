import { SqsJobsError } from '../core/errors.js';
import { SQS_DEFAULT_MESSAGE_BYTES } from '../core/sqs-limits.js';
import type { QueuePort } from '../ports/queue.js';

/**
 * A producer's `maxMessageBytes` above SQS's default is only honest if the queue was raised to
 * accept it: asked of the queue once (again after a failed ask), before the first send.
 */
export class QueueLimit {
  readonly #queue: QueuePort;
  readonly #queueUrl: string;
  readonly #maxBytes: number;
  #checked: Promise<void> | undefined;

  constructor(queue: QueuePort, queueUrl: string, maxBytes: number) {
    this.#queue = queue;
    this.#queueUrl = queueUrl;
    this.#maxBytes = maxBytes;
  }

  check(): Promise<void> {
    if (this.#maxBytes <= SQS_DEFAULT_MESSAGE_BYTES) return Promise.resolve();
    this.#checked ??= this.#queue.maximumMessageBytes(this.#queueUrl).then((accepted) => {
      if (this.#maxBytes > accepted) {
        throw new SqsJobsError(
          'CONFIG_INVALID',
          `maxMessageBytes is ${this.#maxBytes} but ${this.#queueUrl} accepts at most ${accepted} bytes; lower maxMessageBytes or raise the queue's MaximumMessageSize`,
        );
      }
    });
    this.#checked.catch(() => {
      this.#checked = undefined;
    });
    return this.#checked;
  }
}
