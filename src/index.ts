export { defineJob, JobRegistry, validateArgs, isJobDefinition, isDefinition } from './job.js';
export { DEFAULT_BACKOFF, type BackoffPolicy } from './definition-rules.js';
export type { JobDefinition, JobContext, JobSpec, JobArgs, AnyJob, AnyDefinition } from './job.js';
export { defineBatchJob, isBatchJob, MAX_BATCH_SIZE } from './batch-job.js';
export type { BatchJobDefinition, BatchJobSpec, BatchItem, BatchContext, BatchResult, AnyBatchJob } from './batch-job.js';
export { encodeEnvelope, decodeEnvelope, newJobId, ENVELOPE_VERSION, ATTR_JOB, ATTR_JOB_ID } from './envelope.js';
export type { Envelope, Decoded, PoisonReason } from './envelope.js';
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
} from './errors.js';
export type { ErrorCode, FieldIssue, FailedEntry } from './errors.js';
export { Producer, createProducer } from './producer.js';
export { configureDefaultProducer, enqueue, enqueueMany } from './default-producer.js';
export { DEFAULT_MAX_MESSAGE_BYTES } from './producer-options.js';
export type { ProducerOptions, EnqueueOptions, EnqueueManyOptions, EnqueueResult } from './producer-options.js';
export { createQueues, dlqNameFor, readRedrivePolicy } from './queues.js';
export type { QueueChange, QueueSpec, QueuePair, RedrivePolicy } from './queues.js';
export { createSqsClient, createCloudWatchClient } from './aws/clients.js';
export { resolveAwsSettings } from './config.js';
export { Worker, createWorker } from './worker/worker.js';
export type { WorkerOptions, WorkerConfig } from './worker/options.js';
export type { WorkerEvents, JobInfo, BatchInfo, DeadLetterReason } from './job-events.js';
export { retryDelayMs } from './worker/fate/backoff.js';
export { MemcachedLock } from './adapters/memcached-lock.js';
export type { JobLock, ClaimResult, ExtendResult } from './ports/lock.js';
export {
  ATTR_DLQ_REASON,
  ATTR_DLQ_ERROR,
  ATTR_DLQ_SOURCE,
  ATTR_DLQ_RECEIVE_COUNT,
  ATTR_DLQ_AT,
} from './dead-letter.js';
export { getJob, JobStatusReader } from './status/get-job.js';
export type { JobView, UnknownStatus } from './status/get-job.js';
export { fanOutResultSchema, derivedJobId } from './status/completion.js';
export type { FanOutResult } from './status/completion.js';
export type { FanOutOptions } from './job.js';
export type { ProgressFn } from './status/progress.js';
export type { JobStore, JobStatus, JobState, JobViewState, Progress, FanOutStatus, CompletionSpec } from './ports/job-store.js';
export { DynamoJobStore, createJobTable } from './adapters/dynamodb-store.js';
