/** What every job event says about the job and its message. */
export interface JobInfo {
  readonly jobId: string;
  /** The job name, or "unknown" when the message names no job this worker registers (or cannot be read). */
  readonly jobName: string;
  readonly messageId: string;
  readonly queueUrl: string;
  /** SQS ApproximateReceiveCount. */
  readonly attempt: number;
  readonly tenant: string | undefined;
}

export type DeadLetterReason =
  | 'invalid-json'
  | 'not-an-envelope'
  | 'unsupported-version'
  | 'unknown-job'
  | 'invalid-args'
  | 'unrecoverable'
  | 'retries-exhausted';

/** The worker's events. Listeners that throw are logged and never break the worker. */
export interface WorkerEvents {
  'job:start': [JobInfo & { waitMs: number }];
  'job:succeeded': [JobInfo & { waitMs: number; processMs: number }];
  /** A handler failed; `retryDelayMs` is undefined when the message goes to the DLQ instead. */
  'job:failed': [JobInfo & { error: Error; processMs: number; retryDelayMs: number | undefined }];
  'job:dead-lettered': [JobInfo & { reason: DeadLetterReason; detail: string }];
  /** The job id is completed (message deleted) or running elsewhere (message made visible later). */
  'job:duplicate': [JobInfo & { state: 'completed' | 'running' }];
  /** The message was handed back to the queue without running: shutdown, or the lock unavailable and failing closed. */
  'job:released': [JobInfo & { reason: string }];
  'heartbeat:lost': [JobInfo & { reason: string }];
  /** The dedupe lock could not be asked (memcached down): the job ran without it, or was left queued when failing closed. */
  'job:lock-unavailable': [JobInfo];
  'lock:unavailable': [{ error: Error }];
  'lock:restored': [];
  error: [Error];
  stopped: [];
}
