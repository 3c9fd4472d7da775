import type { Envelope } from '../core/envelope.js';
import { toError } from '../core/errors.js';
import type { JobInfo } from '../core/job-events.js';
import type { StatusStore, Transition } from '../ports/status-store.js';
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
  /** Cancelled (cancelJob) before or while it ran. */
  | { readonly kind: 'cancelled'; readonly reason: string }
  /** Deleted without running: its job completed, or this message was dead-lettered already. */
  | { readonly kind: 'duplicate'; readonly succeeded: boolean };

/** A tracked job's run under way. */
interface Run {
  /** Its attempt: a reporter of an earlier run of the same message (a FIFO job retried here) is not this run's. */
  readonly attempt: number;
  readonly startedAt: Date;
  /** Until it fires (or progress comes), `running` is not written. */
  timer: NodeJS.Timeout | undefined;
  write: Promise<void> | undefined;
}

interface StatusDeps {
  readonly store: StatusStore;
  /** Who runs jobs here (host:pid), written with `running`. */
  readonly worker: string;
  readonly progressIntervalMs: number;
  /** How long a tracked job runs before `running` is written (a shorter run writes only its end). */
  readonly runningAfterMs: number;
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
 * runs, and the state it ends in. Writes are fire-and-forget (a failed one is reported; the
 * store's ordering makes a late one harmless). A fan-out child's count in its parent is
 * src/fan-out/count.ts's, made after these writes (src/worker/fate/record-end.ts).
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
    const run: Run = { attempt: info.attempt, startedAt: new Date(), timer: undefined, write: undefined };
    run.timer = setTimeout(() => void this.#recordRunning(info, t, run), this.#d.runningAfterMs);
    run.timer.unref();
    this.#runs.set(info.messageId, run);
  }

  /** The progress reporter of one run of a tracked job (its first write records `running` first). */
  progress(info: JobInfo, t: Tracking): ProgressReporter {
    return new ProgressReporter(
      async (update) => {
        const run = this.#runs.get(info.messageId);
        if (run !== undefined && run.attempt === info.attempt) await this.#recordRunning(info, t, run);
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
   * for it). Resolves (never rejects) once the writes before it are in: the last progress and
   * `running`, after which a fan-out child is counted in its parent.
   */
  ended(info: JobInfo, t: Tracking, end: StatusEnd, progress: ProgressReporter | undefined): Promise<void> {
    // Progress, then `running`, then the end: one after the other, so the end is the last write
    // (the store orders them anyway; this keeps it so on a server that does not apply a condition
    // and its write atomically, and keeps the last progress from landing after `completed`).
    const run = this.#runs.get(info.messageId);
    this.#runs.delete(info.messageId);
    if (progress === undefined && run?.write === undefined) {
      // Nothing written before it (a short run that never reported progress): the end goes now,
      // carrying when the run started.
      if (run?.timer !== undefined) clearTimeout(run.timer);
      if (t.tracked) this.#track(this.#end(info, t, end, run));
      return DONE;
    }
    const flushed = progress === undefined ? Promise.resolve() : progress.flush();
    const before = flushed.then(() => {
      // Not recorded as running yet: the end carries when it started instead.
      if (run !== undefined && run.write === undefined && run.timer !== undefined) clearTimeout(run.timer);
      return run?.write;
    });
    const state = before.then(() => (t.tracked ? this.#end(info, t, end, run) : undefined));
    this.#track(state);
    return before.catch(() => {});
  }

  /** The state write of how a run ended (a `duplicate` writes none). */
  #end(info: JobInfo, t: Tracking, end: StatusEnd, run: Run | undefined): Promise<void> | undefined {
    const started = { worker: this.#d.worker, ...(run === undefined ? {} : { startedAt: run.startedAt }) };
    if (end.kind === 'succeeded') return this.#write(info, t, 'completed', { ...started, result: end.result });
    if (end.kind === 'retry') {
      return this.#write(info, t, 'retrying', {
        ...started,
        error: errorText(end.error),
        nextAttemptAt: new Date(Date.now() + end.delayMs),
      });
    }
    if (end.kind === 'dead-letter') return this.#write(info, t, 'failed', { ...started, reason: end.reason, error: end.detail });
    if (end.kind === 'cancelled') return this.#write(info, t, 'cancelled', { ...started, reason: end.reason });
    return undefined;
  }

  /** Wait for the state writes still in flight (shutdown, before the store's client closes). */
  async flush(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  #track(write: Promise<void> | undefined): void {
    if (write === undefined) return;
    const tracked = write.catch(() => {}).finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
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
      ...(info.tenant === undefined ? {} : { tenant: info.tenant }),
      ...extra,
    };
    return this.#d.store.transition(transition).then(
      () => {},
      (error: unknown) => this.#d.onError('job status', error),
    );
  }
}

/** What ended() answers when nothing is written before the end. */
const DONE: Promise<void> = Promise.resolve();

function errorText(error: Error): string {
  const e = toError(error);
  return `${e.name}: ${e.message}`;
}
