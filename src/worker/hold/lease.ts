import { SqsJobsError } from '../../core/errors.js';
import type { JobInfo } from '../../core/job-events.js';
import type { ReceivedMessage } from '../../core/message.js';
import type { ProgressReporter } from '../../status/progress.js';
import type { Tracking } from '../../status/tracker.js';
import type { Reading } from '../reading.js';

/** Why a lease's signal fired: the code of the SqsJobsError it carries. */
export type AbortCode = 'JOB_TIMEOUT' | 'LEASE_LOST' | 'SHUTDOWN' | 'DEADLINE' | 'CANCELLED';

/** Whether `signal` fired (or the run was aborted) with the AbortCode `code`. */
export function abortedWith(signal: AbortSignal | Interruptible, code: AbortCode): boolean {
  const reason = signal instanceof AbortSignal ? (signal.aborted ? signal.reason : undefined) : signal.abortReason;
  return (reason as { code?: unknown } | undefined)?.code === code;
}

/** What a handler runs under: a signal, fired once by `abort` with the first reason given. */
export interface Abortable {
  readonly signal: AbortSignal;
  abort(code: AbortCode, message: string): void;
}

/** An Abortable that can be watched without making its signal (execute's view of a run). */
export interface Interruptible extends Abortable {
  /** The reason it was aborted with, once it was. */
  readonly abortReason: SqsJobsError | undefined;
  /** Tell `watcher` once when it is aborted (one watcher; undefined removes it). */
  whenAborted(watcher: AbortWatcher | undefined): void;
}

/** What whenAborted tells: an object, so a run watching its lease needs no closure. */
export interface AbortWatcher {
  onAbort(): void;
}

/** The dedupe lock on a message's job id, held while its job runs. */
interface HeldLock {
  readonly jobId: string;
  readonly token: string;
}

/** A fleet-wide permit of the message's tenant (its cap), held while its job runs. */
interface HeldPermit {
  readonly key: string;
  readonly index: number;
  readonly token: string;
}

/**
 * A message this worker holds, from receive to settle: invisible to others until `visibleAt`
 * unless extended, and the one owner of the signal its handler runs under. The heartbeat, the
 * timeout and shutdown call `abort`; everything else only reads `signal`. The first reason wins.
 *
 * Each field is written by one phase only: the heartbeat (hold/) writes the hold's times and
 * `pending`; reading and running the job (run/, batch/) write what was read and claimed; the
 * scheduler (intake/) writes the FIFO retry fields; settle (fate/) only ends the claims.
 */
export class Lease implements Interruptible {
  // Written by the heartbeat.
  visibleAt: number;
  nextExtendAt: number;
  /** What the heartbeat has in flight for this lease (visibility and lock extensions), if anything: settle waits for it before acting. */
  pending: Promise<void> | undefined = undefined;
  // Written by the run phase.
  /** The message as read once (decoded and validated), by the first phase that needed it. */
  reading: Reading | undefined = undefined;
  /** What events say about the job, once it is being run. */
  info: JobInfo | undefined = undefined;
  /** Its handler has started (claimed, permitted): it counts as running for its tenant. */
  handlerStarted = false;
  /** Its job status and fan-out work (a tracked job, a fan-out child); undefined for most messages. */
  tracking: Tracking | undefined = undefined;
  /** The current run's progress reporter: a tracked job's, once its handler has read `ctx.progress`. */
  progress: ProgressReporter | undefined = undefined;
  /** The start its job reserved under its rate limit (ms since the epoch), while it waits for it. */
  rateSlotAt: number | undefined = undefined;
  // Written by the scheduler.
  /** FIFO: how many times the job was retried here, holding its group, without going back to SQS. */
  retries = 0;
  /** A job waiting to be retried here (FIFO), for a permit of its tenant or for its rate slot, does not start before this time. */
  notBefore = 0;
  #lock: HeldLock | undefined = undefined;
  #permit: HeldPermit | undefined = undefined;
  #lost = false;
  /** Made on first use (a handler that reads ctx.signal): most messages are settled without anyone asking for one. */
  #controller: AbortController | undefined;
  #reason: SqsJobsError | undefined;
  #whenAborted: AbortWatcher | undefined;

  constructor(
    readonly message: ReceivedMessage,
    readonly receivedAt: number,
    visibilityTimeoutSeconds: number,
    heartbeatIntervalMs: number,
  ) {
    this.visibleAt = receivedAt + visibilityTimeoutSeconds * 1000;
    this.nextExtendAt = receivedAt + heartbeatIntervalMs;
  }

  /** The job id's lock, once claimed (the heartbeat extends it too), until settle ends it. */
  get lock(): HeldLock | undefined {
    return this.#lock;
  }

  /** The tenant's permit, while it runs under a cap (the heartbeat extends it too). */
  get permit(): HeldPermit | undefined {
    return this.#permit;
  }

  /** The run phase claimed the job id, or took a permit of its tenant. */
  hold(claim: { readonly lock: HeldLock } | { readonly permit: HeldPermit }): void {
    if ('lock' in claim) this.#lock = claim.lock;
    else this.#permit = claim.permit;
  }

  /**
   * Settle begins: the lock and the permit stop being extended; returns them for settle to release.
   * Settle then waits for `pending`, so an extension in flight lands first (one that touched the
   * lock after settle released it would read it as taken by someone else, and may find the lease lost).
   */
  endClaims(): { lock: HeldLock | undefined; permit: HeldPermit | undefined } {
    const claims = { lock: this.#lock, permit: this.#permit };
    this.#lock = undefined;
    this.#permit = undefined;
    return claims;
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#reason !== undefined) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get abortReason(): SqsJobsError | undefined {
    return this.#reason;
  }

  whenAborted(watcher: AbortWatcher | undefined): void {
    this.#whenAborted = watcher;
  }

  /** The lease ended elsewhere (SQS refused it, its visibility ran out, its lock was taken): this worker must not delete the message. */
  get lost(): boolean {
    return this.#lost;
  }

  /**
   * A FIFO job retried here runs again under a fresh signal (the last run's may have fired), and
   * with its args read afresh (the last run's handler may have changed the object it was given).
   */
  newRun(): void {
    if (!this.#lost) {
      this.#controller = undefined;
      this.#reason = undefined;
    }
    this.reading = undefined;
  }

  /**
   * Fire the signal with `code`, once; later calls only mark the lease lost. A watcher set by
   * whenAborted is called once, on the first abort, or on the one that loses a lease whose signal
   * fired already (for a watcher set again after the first).
   */
  abort(code: AbortCode, message: string): void {
    // A lost lease is lost even when its signal already fired for another reason.
    const losing = code === 'LEASE_LOST' && !this.#lost;
    if (code === 'LEASE_LOST') this.#lost = true;
    if (this.#reason === undefined) {
      this.#reason = new SqsJobsError(code, message);
      this.#controller?.abort(this.#reason);
    } else if (!losing) {
      return;
    }
    const watcher = this.#whenAborted;
    this.#whenAborted = undefined;
    watcher?.onAbort();
  }
}
