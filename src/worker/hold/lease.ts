import { SqsJobsError } from '../../errors.js';
import type { JobInfo } from '../../job-events.js';
import type { ReceivedMessage } from '../../ports/queue.js';
import type { ProgressReporter } from '../../status/progress.js';
import type { Tracking } from '../../status/tracker.js';

/** Why a lease's signal fired: the code of the SqsJobsError it carries. */
export type AbortCode = 'JOB_TIMEOUT' | 'LEASE_LOST' | 'SHUTDOWN';

/** What a handler runs under: a signal, fired once by `abort` with the first reason given. */
export interface Abortable {
  readonly signal: AbortSignal;
  abort(code: AbortCode, message: string): void;
}

/**
 * A message this worker holds, from receive to settle: invisible to others until `visibleAt`
 * unless extended, and the one owner of the signal its handler runs under. The heartbeat, the
 * timeout and shutdown call `abort`; everything else only reads `signal`. The first reason wins.
 */
export class Lease implements Abortable {
  visibleAt: number;
  nextExtendAt: number;
  /** Set once the job id is claimed in the dedupe lock; the heartbeat extends it too. */
  lock: { readonly jobId: string; readonly token: string } | undefined = undefined;
  /** The extension in flight for this lease, if any: settle waits for it before acting. */
  pending: Promise<void> | undefined = undefined;
  /** What events say about the job, once the message has been read. */
  info: JobInfo | undefined = undefined;
  /** The fleet-wide concurrency slot of its tenant, while it runs under a cap. */
  slot: { readonly key: string; readonly index: number; readonly token: string } | undefined = undefined;
  /** Its job status and fan-out work (a tracked job, a fan-out child); undefined for most messages. */
  tracking: Tracking | undefined = undefined;
  /** The current run's progress reporter, while a tracked job runs. */
  progress: ProgressReporter | undefined = undefined;
  /** FIFO: how many times the job was retried here, holding its group, without going back to SQS. */
  retries = 0;
  /** FIFO: a job waiting to be retried here does not start before this time. */
  notBefore = 0;
  #lost = false;
  /** Made on first use: most messages are settled without anyone asking for a signal. */
  #controller: AbortController | undefined;

  constructor(
    readonly message: ReceivedMessage,
    readonly receivedAt: number,
    visibilityTimeoutSeconds: number,
    heartbeatIntervalMs: number,
  ) {
    this.visibleAt = receivedAt + visibilityTimeoutSeconds * 1000;
    this.nextExtendAt = receivedAt + heartbeatIntervalMs;
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  /** The lease ended elsewhere (SQS refused it, its visibility ran out, its lock was taken): this worker must not delete the message. */
  get lost(): boolean {
    return this.#lost;
  }

  /** A FIFO job retried here runs again under a fresh signal (the last run's may have fired). */
  newRun(): void {
    if (!this.#lost) this.#controller = undefined;
  }

  /** Fire the signal with `code`, once; later calls do nothing. */
  abort(code: AbortCode, message: string): void {
    // A lost lease is lost even when its signal already fired for another reason.
    if (code === 'LEASE_LOST') this.#lost = true;
    if (this.signal.aborted) return;
    this.#controller!.abort(new SqsJobsError(code, message));
  }
}
