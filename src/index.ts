export { defineJob, JobRegistry, validateArgs, isJobDefinition, isDefinition } from './core/job.js';
export { DEFAULT_BACKOFF, type BackoffPolicy } from './core/definition-rules.js';
export type { JobDefinition, JobContext, JobSpec, JobArgs, AnyJob, AnyDefinition } from './core/job.js';
export { defineBatchJob, isBatchJob, MAX_BATCH_SIZE } from './core/batch-job.js';
export type { BatchJobDefinition, BatchJobSpec, BatchItem, BatchContext, BatchResult, AnyBatchJob } from './core/batch-job.js';
export { encodeEnvelope, decodeEnvelope, newJobId, ENVELOPE_VERSION, ATTR_JOB, ATTR_JOB_ID } from './core/envelope.js';
export type { Envelope, Decoded, PoisonReason } from './core/envelope.js';
export {
  SqsJobsError,
  ConfigError,
  UnknownJobError,
  ValidationError,
  PayloadTooLargeError,
  EnqueueBatchError,
  UnrecoverableError,
  RetryLaterError,
  ERROR_CODES,
} from './core/errors.js';
export type { ErrorCode, FieldIssue, FailedEntry } from './core/errors.js';
export { Producer, createProducer } from './producer/producer.js';
export { configureDefaultProducer, enqueue, enqueueMany } from './producer/default.js';
export { DEFAULT_MAX_MESSAGE_BYTES } from './producer/options.js';
export type { ProducerOptions, EnqueueOptions, EnqueueManyOptions, EnqueueResult } from './producer/options.js';
export { createQueues, dlqNameFor, readRedrivePolicy } from './ops/queues.js';
export type { QueueChange, QueueSpec, QueuePair, RedrivePolicy } from './ops/queues.js';
export { createSqsClient, createCloudWatchClient } from './adapters/aws-clients.js';
export { resolveAwsSettings } from './config/env.js';
export { Worker, createWorker } from './worker/worker.js';
export type { WorkerOptions, WorkerConfig } from './worker/options.js';
export type { WorkerEvents, JobInfo, BatchInfo, DeadLetterReason } from './core/job-events.js';
export { retryDelayMs } from './worker/fate/backoff.js';
export { MemcachedLock } from './adapters/memcached-lock.js';
export type { JobLock, ClaimResult, ExtendResult } from './ports/lock.js';
export {
  ATTR_DLQ_REASON,
  ATTR_DLQ_ERROR,
  ATTR_DLQ_SOURCE,
  ATTR_DLQ_RECEIVE_COUNT,
  ATTR_DLQ_AT,
} from './core/dead-letter.js';
export { getJob, JobStatusReader } from './status/get-job.js';
export type { JobView, UnknownStatus } from './status/get-job.js';
export { fanOutResultSchema, derivedJobId } from './fan-out/completion.js';
export type { FanOutResult } from './fan-out/completion.js';
export type { FanOutOptions } from './core/job.js';
export type { ProgressFn } from './status/progress.js';
export type { JobStore, JobStatus, JobState, JobViewState, Progress, FanOutStatus, CompletionSpec } from './ports/job-store.js';
export { DynamoJobStore, createJobTable } from './adapters/dynamodb-store.js';
