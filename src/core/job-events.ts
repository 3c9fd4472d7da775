/** What every job event says about the job and its message. */
export interface JobInfo {
  readonly jobId: string;
  /** The job name, or "unknown" when the message names no job this worker registers (or cannot be read). */
  readonly jobName: string;
  readonly messageId: string;
  readonly queueUrl: string;
  /** The job's receives: SQS's ApproximateReceiveCount, plus those of the messages it was re-sent from. */
  readonly attempt: number;
  readonly tenant: string | undefined;
}

/** What batch events say about a batch (defineBatchJob). */
interface BatchInfo {
  readonly jobName: string;
  readonly key: string;
  /** The queue of its first item (a batch may hold items of several queues). */
  readonly queueUrl: string;
  readonly size: number;
}

/**
 * Why the worker sent a message to the DLQ (`job:dead-lettered`, attribute `sqsjobs-dlq-reason`): a body
 * it cannot read or route, args failing the schema, an UnrecoverableError, or a failure on its last receive.
 */
export type DeadLetterReason =
  | 'invalid-json'
  | 'not-an-envelope'
  | 'unsupported-version'
  | 'unknown-job'
  | 'invalid-args'
  | 'unknown-topic'
  | 'unrecoverable'
  | 'retries-exhausted';

/**
 * Why a message was deleted without running: its job id completed, this very message is already in
 * the DLQ (a leftover whose delete failed), or another message carries the job, running now.
 */
export type DuplicateState = 'completed' | 'dead-lettered' | 'running';

/** What kept a job from starting when it was received: its tenant's cap (tenantCaps), its own rate limit (rateLimit), or a pause (`sqs-jobs pause`). */
export type Limit = 'tenant-cap' | 'rate-limit' | 'paused';

/** The worker's events. Listeners that throw are logged and never break the worker. */
export interface WorkerEvents {
  'job:start': [JobInfo & { waitMs: number }];
  'job:succeeded': [JobInfo & { waitMs: number; processMs: number }];
  /** A handler failed; `retryDelayMs` is undefined when the message goes to the DLQ instead. */
  'job:failed': [JobInfo & { error: Error; processMs: number; retryDelayMs: number | undefined }];
  'job:dead-lettered': [JobInfo & { reason: DeadLetterReason; detail: string }];
  /** The message was redundant and deleted without running (see DuplicateState). */
  'job:duplicate': [JobInfo & { state: DuplicateState }];
  /** The job was cancelled (cancelJob): not run, or stopped through its signal; its message deleted. */
  'job:cancelled': [JobInfo & { reason: string }];
  /**
   * The message was handed back to the queue without (finishing) running: shutdown, the same
   * message running elsewhere, the lock unavailable while failing closed, or a FIFO group blocked.
   */
  'job:handed-back': [JobInfo & { reason: string }];
  /**
   * A message with no receive left was re-sent (same job id, fresh receive count) instead of handed
   * back, so SQS's redrive does not dead-letter a job that did not run.
   */
  'job:resent': [JobInfo & { reason: string; delaySeconds: number }];
  /** Its tenant was at its cap (tenantCaps) or the job at its rate limit (`limit` says which): re-sent to run later; not counted as an attempt. */
  'job:deferred': [JobInfo & { reason: string; delaySeconds: number; limit: Limit }];
  /**
   * Its tenant was at its cap (tenantCaps) or the job at its rate limit (`limit` says which): kept
   * here, held, to start when a permit frees or its turn comes (no receive spent, nothing re-sent).
   * Past half its receives before the DLQ it is deferred instead (not on FIFO). Emitted the first time it waits.
   */
  'job:waiting': [JobInfo & { reason: string; limit: Limit }];
  /** A batch handler starts on `size` items of one key; `heldMs`: how long its oldest item was held. */
  'batch:start': [BatchInfo & { heldMs: number }];
  /** A batch handler ended; `failed`: its items that failed (every item when it threw or timed out). */
  'batch:end': [BatchInfo & { failed: number; processMs: number }];
  'heartbeat:lost': [JobInfo & { reason: string }];
  /** The dedupe lock could not be asked (memcached down): the job ran without it, or was left queued when failing closed. */
  'job:lock-unavailable': [JobInfo];
  /** A schedule's occurrence was sent as its job (`schedules: true`): `lateMs` after the occurrence's time. */
  'schedule:fired': [{ schedule: string; jobName: string; jobId: string; queueUrl: string; occurrence: Date; lateMs: number }];
  /** Occurrences of a schedule that will not run: its overlap or catch-up rule, or args enqueue refuses. */
  'schedule:skipped': [{ schedule: string; jobName: string; queueUrl: string; count: number }];
  'lock:unavailable': [{ error: Error }];
  'lock:restored': [];
  error: [Error];
  stopped: [];
}
