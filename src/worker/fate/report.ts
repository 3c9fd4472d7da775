import type { DeadLetterReason, DuplicateState, JobInfo, Limit } from '../../core/job-events.js';
import type { Logger } from 'pino';
import type { Reporting } from '../context.js';
import { jobLogger } from '../run/job-logger.js';

/**
 * What settle tells the world about a message's end: the worker's events and its log lines, one
 * function per act. Reporting only: nothing here touches the message.
 */
export class Report {
  readonly #to: Reporting;
  readonly #info: JobInfo;
  #child: Logger | undefined;

  constructor(to: Reporting, info: JobInfo) {
    this.#to = to;
    this.#info = info;
  }

  /** The job's logger, made on first use. */
  #log(): Logger {
    this.#child ??= jobLogger(this.#to.log, this.#info);
    return this.#child;
  }

  succeeded(waitMs: number, processMs: number): void {
    this.#to.emit('job:succeeded', { ...this.#info, waitMs, processMs });
    if (this.#to.log.isLevelEnabled('debug')) this.#log().debug({ processMs, waitMs }, 'job succeeded');
  }

  duplicate(state: DuplicateState): void {
    this.#to.emit('job:duplicate', { ...this.#info, state });
    this.#log().info({ state }, DUPLICATE_LOG[state]);
  }

  /** The handler failed; `retryDelayMs`: when it runs again (undefined: it does not, it goes to the DLQ). */
  failed(error: Error, processMs: number, retryDelayMs: number | undefined, inPlace = false): void {
    this.#to.emit('job:failed', { ...this.#info, error, processMs, retryDelayMs });
    if (retryDelayMs === undefined) return;
    if (inPlace)
      this.#log().warn({ err: error, retryInMs: retryDelayMs }, 'job failed; it will be retried here, its FIFO group waiting for it');
    else this.#log().warn({ err: error, retryInSeconds: retryDelayMs / 1000 }, 'job failed; it will be retried');
  }

  cancelled(reason: string): void {
    this.#to.emit('job:cancelled', { ...this.#info, reason });
    this.#log().info({ reason }, 'job cancelled: message deleted, not run again');
  }

  handedBack(reason: string): void {
    this.#to.emit('job:handed-back', { ...this.#info, reason });
  }

  deadLettered(reason: DeadLetterReason, detail: string): void {
    this.#to.emit('job:dead-lettered', { ...this.#info, reason, detail });
    this.#log().error({ reason, detail }, 'message moved to the dead-letter queue');
  }

  deadLetterFailed(error: Error, reason: DeadLetterReason, dlq: string): void {
    this.#log().error({ err: error, reason }, 'could not send the message to the DLQ; it stays in the queue');
    const m = this.#info;
    this.#to.onError(
      'dead-letter',
      new Error(`could not dead-letter message ${m.messageId} to ${dlq}: ${error.message}`, { cause: error }),
    );
  }

  resent(reason: string, delaySeconds: number): void {
    this.#to.emit('job:resent', { ...this.#info, reason, delaySeconds });
    this.#log().warn({ reason, delaySeconds }, 'the message had no receive left: re-sent with the same job id rather than handed back');
  }

  /** Its job id held under this very message (the run on it never finished): re-sent, this receive not counted. */
  resentUnfinished(unfinishedRuns: number | undefined, delaySeconds: number): void {
    this.#log().warn(
      { unfinishedRuns, delaySeconds },
      'came back while its job id was still held under it (its worker was killed, or lost the message): re-sent, this receive not counted',
    );
  }

  resendFailed(error: unknown, reason: string): void {
    this.#to.onError('re-send', error);
    this.#log().error(
      { err: error, reason },
      'could not re-send a message with no receive left; handed back, and SQS may dead-letter it on its next receive',
    );
  }

  deferred(reason: string, delaySeconds: number, limit: Limit): void {
    this.#to.emit('job:deferred', { ...this.#info, reason, delaySeconds, limit });
    if (this.#to.log.isLevelEnabled('debug')) this.#log().debug({ reason, delaySeconds }, 'deferred: re-sent to run later');
  }

  waiting(reason: string, limit: Limit): void {
    this.#to.emit('job:waiting', { ...this.#info, reason, limit });
    if (this.#to.log.isLevelEnabled('debug')) this.#log().debug({ reason, limit }, 'waiting here for its turn');
  }

  visibilityUnchanged(reason: string): void {
    this.#log().warn({ reason }, 'could not change visibility; the message returns when its current visibility timeout ends');
  }
}

const DUPLICATE_LOG = {
  completed: 'job id already completed: deleting the duplicate without running it',
  'dead-lettered': 'this message is already in the dead-letter queue (its delete had failed): deleting the leftover',
  running: 'job id is running under another message: deleting this copy (the other message carries the job)',
} as const;
