import type { Logger } from 'pino';
import type { Envelope } from '../core/envelope.js';
import { toError } from '../core/errors.js';
import type { JobInfo } from '../core/job-events.js';
import type { JobStore, Transition } from '../ports/job-store.js';
import type { QueuePort } from '../ports/queue.js';
import { sleep } from '../core/sleep.js';
import { sendCompletion } from '../fan-out/completion.js';
import { ProgressReporter } from './progress.js';

/** What status work a message carries: its own record (`tracked`), and the fan-out it counts into. */
export interface Tracking {
  readonly tracked: boolean;
  readonly parentId: string | undefined;
  readonly enqueuedAt: string;
  /**
   * The message the job's dedupe lock names (its first, across re-sends): a fan-out child claims
   * the completion with it, so the same message coming back after a failed send claims again, and
   * a copy of the child (another message) waits instead of sending a second completion.
   */
  readonly originId: string;
}

/** How a message ended, as far as its status goes. */
export type StatusEnd =
  | { readonly kind: 'succeeded'; readonly result?: unknown }
  | { readonly kind: 'retry'; readonly error: Error; readonly delayMs: number }
  | { readonly kind: 'dead-letter'; readonly reason: string; readonly detail: string }
  /** Deleted without running: its job completed, or this message was dead-lettered already. */
  | { readonly kind: 'duplicate'; readonly succeeded: boolean };

/** A tracked job's run under way. */
interface Run {
  readonly startedAt: Date;
  /** Until it fires (or progress comes), `running` is not written. */
  timer: NodeJS.Timeout | undefined;
  write: Promise<void> | undefined;
}

export interface StatusDeps {
  readonly store: JobStore;
  readonly sqs: QueuePort;
  /** Who runs jobs here (host:pid), written with `running`. */
  readonly worker: string;
  readonly reclaimAfterMs: number;
  readonly progressIntervalMs: number;
  /** How long a tracked job runs before `running` is written (a shorter run writes only its end). */
  readonly runningAfterMs: number;
  readonly logger: Logger;
  readonly onError: (where: string, error: unknown) => void;
}

/** The Tracking of a message: undefined when it has neither a record nor a fan-out (it pays nothing). */
export function trackingOf(envelope: Envelope, jobTracks: boolean, originId: string): Tracking | undefined {
  const tracked = envelope.track === true || jobTracks;
  if (!tracked && envelope.parent === undefined) return undefined;
  return { tracked, parentId: envelope.parent, enqueuedAt: envelope.enqueuedAt, originId };
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
  /** The runs under way of tracked jobs, by message id: when each started, and its `running` write once made. */
  readonly #runs = new Map<string, Run>();
  /** State writes not yet answered. */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(deps: StatusDeps) {
    this.#d = deps;
  }

  /**
   * A tracked job started. `running` is written once it has run for `runningAfterMs`, or as soon as
   * it reports progress: a job done sooner goes from `waiting` straight to its end (one write).
   */
  running(info: JobInfo, t: Tracking): void {
    if (!t.tracked) return;
    const run: Run = { startedAt: new Date(), timer: undefined, write: undefined };
    run.timer = setTimeout(() => void this.#recordRunning(info, t, run), this.#d.runningAfterMs);
    run.timer.unref();
    this.#runs.set(info.messageId, run);
  }

  /** The progress reporter of one run of a tracked job (its first write records `running` first). */
  progress(info: JobInfo, t: Tracking): ProgressReporter {
    return new ProgressReporter(
      async (update) => {
        const run = this.#runs.get(info.messageId);
        if (run !== undefined) await this.#recordRunning(info, t, run);
        await this.#d.store.progress(info.jobId, update);
      },
      this.#d.progressIntervalMs,
      (error) => this.#d.onError('job progress', error),
    );
  }

  #recordRunning(info: JobInfo, t: Tracking, run: Run): Promise<void> {
    if (run.timer !== undefined) clearTimeout(run.timer);
    run.timer = undefined;
    if (run.write === undefined) {
      run.write = this.#write(info, t, 'running', { worker: this.#d.worker, startedAt: run.startedAt });
      this.#track(run.write);
    }
    return run.write;
  }

  /**
   * Record how the message ended. The state write goes on in the background (settle does not wait
   * for it); only a fan-out child's count is waited for, while settle keeps the message held.
   * Answers false when that count could not be made: its message must come back, not be deleted.
   */
  ended(info: JobInfo, t: Tracking, end: StatusEnd, progress: ProgressReporter | undefined): Promise<boolean> {
    // Progress, then `running`, then the end: one after the other, so the end is the last write
    // (the store orders them anyway; this keeps it so on a server that does not apply a condition
    // and its write atomically, and keeps the last progress from landing after `completed`).
    const run = this.#runs.get(info.messageId);
    this.#runs.delete(info.messageId);
    const flushed = progress === undefined ? Promise.resolve() : progress.flush();
    const before = flushed.then(() => {
      // Not recorded as running yet (a short run): the end carries when it started instead.
      if (run !== undefined && run.write === undefined && run.timer !== undefined) clearTimeout(run.timer);
      return run?.write;
    });
    const started = { worker: this.#d.worker, ...(run === undefined ? {} : { startedAt: run.startedAt }) };
    const state = before.then(() => {
      if (!t.tracked) return;
      if (end.kind === 'succeeded') return this.#write(info, t, 'completed', { ...started, result: end.result });
      if (end.kind === 'retry') {
        return this.#write(info, t, 'retrying', {
          ...started,
          error: errorText(end.error),
          nextAttemptAt: new Date(Date.now() + end.delayMs),
        });
      }
      if (end.kind === 'dead-letter') return this.#write(info, t, 'failed', { ...started, reason: end.reason, error: end.detail });
    });
    this.#track(state);
    if (t.parentId === undefined || end.kind === 'retry') return Promise.resolve(true);
    const parentId = t.parentId;
    const succeeded = end.kind === 'succeeded' || (end.kind === 'duplicate' && end.succeeded);
    return before.then(() => this.#countChild(info, t, parentId, succeeded));
  }

  /** Wait for the state writes still in flight (shutdown, before the store's client closes). */
  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #track(write: Promise<void>): void {
    const tracked = write.catch(() => {}).finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  /** Count a fan-out child's end; false when its message must come back (the count, or the completion it claimed, did not go through). */
  async #countChild(info: JobInfo, t: Tracking, parentId: string, succeeded: boolean): Promise<boolean> {
    const { store, sqs } = this.#d;
    try {
      const end = { parentId, childId: info.jobId, succeeded };
      let count = await store.childEnded(end, t.originId, this.#d.reclaimAfterMs);
      // Children ending together: one claims the completion, the others usually see it sent within
      // moments. Ask again a few times before handing the message back for later.
      for (let wait = 100; count.kind === 'completion-pending' && wait <= 800; wait *= 2) {
        await sleep(wait);
        count = await store.childEnded(end, t.originId, this.#d.reclaimAfterMs);
      }
      if (count.kind === 'no-fan-out') {
        this.#d.logger.warn(
          { jobId: info.jobId, parentId },
          'this child names a fan-out the job store has no record of (expired?): not counted',
        );
        return true;
      }
      if (count.kind === 'completion-pending') {
        // Another child claimed the completion moments ago and has not sent it yet: come back, and
        // take it over if that claimer died.
        return false;
      }
      if (count.completion !== undefined) {
        await sendCompletion(sqs, store, parentId, count.completion, count.status);
        this.#d.logger.info({ parentId, ...count.status, completionJob: count.completion.job }, 'fan-out complete: completion job sent');
      }
      return true;
    } catch (error) {
      this.#d.onError('fan-out count', error);
      this.#d.logger.warn(
        { err: error, jobId: info.jobId, parentId },
        'could not count this child in its fan-out (or send its completion): its message comes back and is counted then',
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
