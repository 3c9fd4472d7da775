import type { Logger } from 'pino';
import type { Envelope } from '../envelope.js';
import { toError } from '../errors.js';
import type { JobInfo } from '../job-events.js';
import type { JobStore, Transition } from '../ports/job-store.js';
import type { QueuePort } from '../ports/queue.js';
import { sendCompletion } from './completion.js';
import { ProgressReporter } from './progress.js';

/** What status work a message carries: its own record (`tracked`), and the fan-out it counts into. */
export interface Tracking {
  readonly tracked: boolean;
  readonly parentId: string | undefined;
  readonly enqueuedAt: string;
}

/** How a message ended, as far as its status goes. */
export type StatusEnd =
  | { readonly kind: 'succeeded'; readonly result?: unknown }
  | { readonly kind: 'retry'; readonly error: Error; readonly delayMs: number }
  | { readonly kind: 'dead-letter'; readonly reason: string; readonly detail: string }
  /** Deleted without running: its job completed, or this message was dead-lettered already. */
  | { readonly kind: 'duplicate'; readonly succeeded: boolean };

export interface StatusDeps {
  readonly store: JobStore;
  readonly sqs: QueuePort;
  /** Who runs jobs here (host:pid), written with `running`. */
  readonly worker: string;
  readonly reclaimAfterMs: number;
  readonly progressIntervalMs: number;
  readonly logger: Logger;
  readonly onError: (where: string, error: unknown) => void;
}

/** The Tracking of a message: undefined when it has neither a record nor a fan-out (it pays nothing). */
export function trackingOf(envelope: Envelope, jobTracks: boolean): Tracking | undefined {
  const tracked = envelope.track === true || jobTracks;
  if (!tracked && envelope.parent === undefined) return undefined;
  return { tracked, parentId: envelope.parent, enqueuedAt: envelope.enqueuedAt };
}

/**
 * The worker's side of job status: `running` when a handler starts, throttled progress while it
 * runs, the state it ends in, and for a fan-out child the count in its parent (which sends the
 * completion job when this child completes the set). State writes are fire-and-forget (a failed
 * one is logged; the store's ordering makes a late one harmless). A child's count is awaited: its
 * message is deleted only once the count is in, so a crash or a store outage brings the child back
 * (found completed by the dedupe lock, counted then) rather than losing the count.
 */
export class StatusTracker {
  readonly #d: StatusDeps;
  /** The `running` write of each message whose run has not ended, by message id: the end's write goes after it. */
  readonly #running = new Map<string, Promise<void>>();

  constructor(deps: StatusDeps) {
    this.#d = deps;
  }

  running(info: JobInfo, t: Tracking): void {
    if (!t.tracked) return;
    const write = this.#write(info, t, 'running', { worker: this.#d.worker }).finally(() => {
      if (this.#running.get(info.messageId) === write) this.#running.delete(info.messageId);
    });
    this.#running.set(info.messageId, write);
  }

  /** The progress reporter of one run of a tracked job. */
  progress(info: JobInfo): ProgressReporter {
    return new ProgressReporter(
      (update) => this.#d.store.progress(info.jobId, update),
      this.#d.progressIntervalMs,
      (error) => this.#d.onError('job progress', error),
    );
  }

  /** Record how the message ended. Answers false when a fan-out child's end could not be counted: do not delete it. */
  async ended(info: JobInfo, t: Tracking, end: StatusEnd, progress: ProgressReporter | undefined): Promise<boolean> {
    await progress?.flush();
    // The store orders writes by attempt and state anyway; sending them one after the other keeps
    // that true on a server that does not apply a condition and its write atomically (moto).
    await this.#running.get(info.messageId);
    if (t.tracked) {
      if (end.kind === 'succeeded') this.#write(info, t, 'completed', { result: end.result });
      if (end.kind === 'retry') {
        this.#write(info, t, 'retrying', { error: errorText(end.error), nextAttemptAt: new Date(Date.now() + end.delayMs) });
      }
      if (end.kind === 'dead-letter') this.#write(info, t, 'failed', { reason: end.reason, error: end.detail });
    }
    if (t.parentId === undefined || end.kind === 'retry') return true;
    const succeeded = end.kind === 'succeeded' || (end.kind === 'duplicate' && end.succeeded);
    return this.#countChild(info, t.parentId, succeeded);
  }

  async #countChild(info: JobInfo, parentId: string, succeeded: boolean): Promise<boolean> {
    const { store, sqs } = this.#d;
    try {
      const { status, completion } = await store.childEnded(
        { parentId, childId: info.jobId, succeeded },
        info.messageId,
        this.#d.reclaimAfterMs,
      );
      if (completion !== undefined) {
        await sendCompletion(sqs, store, parentId, completion, status);
        this.#d.logger.info({ parentId, ...status, completionJob: completion.job }, 'fan-out complete: completion job sent');
      }
      return true;
    } catch (error) {
      this.#d.onError('fan-out count', error);
      this.#d.logger.warn(
        { err: error, jobId: info.jobId, parentId },
        'could not count this child in its fan-out: its message comes back and is counted then',
      );
      return false;
    }
  }

  /** Write a state change; never rejects (a failure is reported). */
  #write(info: JobInfo, t: Tracking, state: Transition['state'], extra: Partial<Transition>): Promise<void> {
    const transition: Transition = {
      jobId: info.jobId,
      jobName: info.jobName,
      state,
      attempt: info.attempt,
      at: new Date(),
      enqueuedAt: t.enqueuedAt,
      ...(t.parentId === undefined ? {} : { parentId: t.parentId }),
      ...extra,
    };
    return this.#d.store.transition(transition).then(
      () => {},
      (error: unknown) => this.#d.onError('job status', error),
    );
  }
}

function errorText(error: Error): string {
  const e = toError(error);
  return `${e.name}: ${e.message}`;
}
