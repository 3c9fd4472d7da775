import { types } from 'node:util';
import { brand } from './brand.js';

/**
 * The error catalogue. Every error sqs-jobs throws is an SqsJobsError with a stable `code`,
 * a message that says what was wrong (with the value) and what to do, and the `cause` when
 * there is one. Codes are part of the public API: match on `code`, never on the message.
 */
export const ERROR_CODES = [
  'CONFIG_INVALID',
  'JOB_UNKNOWN',
  'JOB_DUPLICATE_NAME',
  'JOB_DEFINITION_INVALID',
  'ARGS_INVALID',
  'OPTIONS_INVALID',
  'PAYLOAD_TOO_LARGE',
  'ENQUEUE_FAILED',
  'ENQUEUE_BATCH_PARTIAL',
  'PUBLISH_FAILED',
  'PUBLISH_BATCH_PARTIAL',
  'QUEUE_SETUP_FAILED',
  'JOB_NOT_FOUND',
  'SCHEDULE_NOT_FOUND',
  'JOB_ENDED',
  'QUEUE_FULL',
  'JOB_PAUSED',
  'STORE_UNREACHABLE',
  'LOCK_UNREACHABLE',
  'UNRECOVERABLE',
  'RETRY_LATER',
  'JOB_TIMEOUT',
  'LEASE_LOST',
  'SHUTDOWN',
  'DEADLINE',
  'CANCELLED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

// Every class here is branded: `instanceof` holds for errors made by another copy of sqs-jobs
// (a handler's UnrecoverableError from a jobs file loaded twice, say). core/brand.ts says how.

/** The base of every error sqs-jobs throws: match on its stable `code`, never on the message; `cause` is kept when given. */
export class SqsJobsError extends Error {
  static {
    brand(SqsJobsError, 'sqs-jobs/SqsJobsError');
  }
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Options or environment that cannot work: thrown at startup, before any network call. */
export class ConfigError extends SqsJobsError {
  static {
    brand(ConfigError, 'sqs-jobs/ConfigError');
  }
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/** A job name that no registry knows. */
export class UnknownJobError extends SqsJobsError {
  static {
    brand(UnknownJobError, 'sqs-jobs/UnknownJobError');
  }
  readonly jobName: string;
  constructor(jobName: string, known: readonly string[]) {
    const list = known.length > 0 ? known.join(', ') : 'none';
    super('JOB_UNKNOWN', `unknown job "${jobName}": register it with defineJob() first (known jobs: ${list})`);
    this.jobName = jobName;
  }
}

/** One problem found by a schema: where it is and which rule it broke. */
export interface FieldIssue {
  /** Dotted path to the field, e.g. `args.user.email`; `args` for the whole object. */
  readonly field: string;
  readonly rule: string;
}

/** Arguments or options that fail their schema. The message names every field and its rule. */
export class ValidationError extends SqsJobsError {
  static {
    brand(ValidationError, 'sqs-jobs/ValidationError');
  }
  readonly issues: readonly FieldIssue[];
  constructor(code: 'ARGS_INVALID' | 'OPTIONS_INVALID', subject: string, issues: readonly FieldIssue[]) {
    const detail = issues.map((i) => `${i.field}: ${i.rule}`).join('; ');
    super(code, `${subject}: ${detail}`);
    this.issues = issues;
  }
}

/** A message body bigger than the configured limit: store the payload elsewhere and send a reference. */
export class PayloadTooLargeError extends SqsJobsError {
  static {
    brand(PayloadTooLargeError, 'sqs-jobs/PayloadTooLargeError');
  }
  readonly size: number;
  readonly limit: number;
  /** `what`: the message's name in the error, e.g. `job "send-email"` or `event "order.placed" payloads[3]`. */
  constructor(what: string, size: number, limit: number) {
    super(
      'PAYLOAD_TOO_LARGE',
      `${what}: message body is ${size} bytes, over the limit of ${limit} bytes. ` +
        'Jobs and events carry references, not payloads: store the data elsewhere (S3, a database) and send its key or URL.',
    );
    this.size = size;
    this.limit = limit;
  }
}

/** The first five entries a batch call did not take, `#index (id): code message`, and how many more. */
function listFailures(failed: readonly { index: number; id: string; code: string; message: string }[]): string {
  const shown = failed
    .slice(0, 5)
    .map((f) => `#${f.index} (${f.id}): ${f.code} ${f.message}`)
    .join('; ');
  return failed.length > 5 ? `${shown}; and ${failed.length - 5} more` : shown;
}

/** What became of one entry of enqueueMany that SQS did not accept. */
export interface FailedEntry {
  /** Position in the argsList given to enqueueMany. */
  readonly index: number;
  readonly jobId: string;
  readonly code: string;
  readonly message: string;
}

/** enqueueMany sent some entries and not others; `failed` names exactly which, `sent` the rest. */
export class EnqueueBatchError extends SqsJobsError {
  static {
    brand(EnqueueBatchError, 'sqs-jobs/EnqueueBatchError');
  }
  readonly failed: readonly FailedEntry[];
  /** The entries that went (`messageId` undefined for a job kept in the job store until its time). */
  readonly sent: readonly { index: number; jobId: string; messageId: string | undefined }[];
  constructor(failed: readonly FailedEntry[], sent: EnqueueBatchError['sent'], options?: { cause?: unknown }) {
    const shown = listFailures(failed.map((f) => ({ ...f, id: f.jobId })));
    super('ENQUEUE_BATCH_PARTIAL', `${failed.length} of ${failed.length + sent.length} jobs were not enqueued: ${shown}`, options);
    this.failed = failed;
    this.sent = sent;
  }
}

/** What became of one event of publishMany that SNS did not take. */
interface UnpublishedEvent {
  /** Position in the payloads given to publishMany. */
  readonly index: number;
  readonly eventId: string;
  readonly code: string;
  readonly message: string;
}

/** publishMany published some events and not others; `failed` names exactly which, `sent` the rest. */
export class PublishBatchError extends SqsJobsError {
  static {
    brand(PublishBatchError, 'sqs-jobs/PublishBatchError');
  }
  readonly failed: readonly UnpublishedEvent[];
  readonly sent: readonly { index: number; eventId: string; messageId: string }[];
  constructor(event: string, failed: readonly UnpublishedEvent[], sent: PublishBatchError['sent']) {
    const shown = listFailures(failed.map((f) => ({ ...f, id: f.eventId })));
    super(
      'PUBLISH_BATCH_PARTIAL',
      `${failed.length} of ${failed.length + sent.length} "${event}" events were not published: ${shown} (publish them again with the same ids: each subscriber still runs once)`,
    );
    this.failed = failed;
    this.sent = sent;
  }
}

/**
 * Throw from a handler to send the message to the dead-letter queue at once, without retries:
 * the job can never succeed (e.g. the record it refers to was deleted).
 */
export class UnrecoverableError extends SqsJobsError {
  static {
    brand(UnrecoverableError, 'sqs-jobs/UnrecoverableError');
  }
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNRECOVERABLE', message, options);
  }
}

/** Throw from a handler to retry after `delayMs` instead of the computed backoff. */
export class RetryLaterError extends SqsJobsError {
  static {
    brand(RetryLaterError, 'sqs-jobs/RetryLaterError');
  }
  readonly delayMs: number;
  constructor(delayMs: number, message = `retry requested in ${delayMs} ms`, options?: { cause?: unknown }) {
    super('RETRY_LATER', message, options);
    if (!Number.isFinite(delayMs) || delayMs < 0) {
      throw new RangeError(`RetryLaterError: delayMs must be a finite number >= 0, got ${delayMs}`);
    }
    this.delayMs = delayMs;
  }
}

/**
 * Admission refused the job: the queue's backlog is at its high-water mark (the workers' drain
 * capacity × the SLA), so a job enqueued now would wait longer than the SLA. Nothing was sent.
 * Try again after `retryAfterMs` (the HTTP API answers 429 with `Retry-After`): a turn is kept for
 * the same job and args until then.
 */
export class QueueFullError extends SqsJobsError {
  static {
    brand(QueueFullError, 'sqs-jobs/QueueFullError');
  }
  readonly retryAfterMs: number;
  /** Messages waiting to start when it was refused (estimated). */
  readonly backlog: number;
  readonly highWaterMark: number;
  /** The workers' measured drain capacity, messages per second. */
  readonly drainPerSecond: number;

  constructor(f: { retryAfterMs: number; backlog: number; highWaterMark: number; drainPerSecond: number }) {
    super(
      'QUEUE_FULL',
      `the queue is full: ${f.backlog} jobs wait, its high-water mark is ${f.highWaterMark} (${f.drainPerSecond.toFixed(1)} jobs/s drained); try again in ${Math.ceil(f.retryAfterMs / 1000)} s`,
    );
    this.retryAfterMs = f.retryAfterMs;
    this.backlog = f.backlog;
    this.highWaterMark = f.highWaterMark;
    this.drainPerSecond = f.drainPerSecond;
  }
}

/** Turn anything thrown into an Error, once, at the boundary (an Error of another realm, a `vm` context's, is kept as it is). */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error || types.isNativeError(thrown)) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  try {
    return new Error(`non-error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`non-error thrown: ${String(thrown)}`);
  }
}
