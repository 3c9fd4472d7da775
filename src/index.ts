/**
 * sqs-jobs: background jobs on Amazon SQS. Define jobs, enqueue them, run workers, read job status.
 * Ports and adapters: `sqs-jobs/adapters`. In-memory fakes and a handler runner for tests:
 * `sqs-jobs/testing`.
 *
 * @module sqs-jobs
 */
// Jobs
export { defineJob } from './core/job.js';
export { JobRegistry } from './core/job-registry.js';
export type { JobDefinition, JobContext, JobArgs, AnyJob, AnyDefinition } from './core/job.js';
export { defineBatchJob } from './core/batch-job.js';
// Events
export { defineEvent } from './core/event.js';
export type { EventDefinition, AnyEvent, EventPayload, FilterPolicy } from './core/event.js';
export type { PublishOptions, PublishManyOptions, PublishResult } from './producer/publish.js';
export { createPublisher } from './producer/create-publisher.js';
export type { Publisher, PublisherOptions } from './producer/create-publisher.js';
export { createEvents } from './ops/wiring.js';
export type { EventsProvisioned, SubscriberQueue, EventChange } from './ops/events.js';
export type { BatchJobDefinition, BatchItem, BatchResult } from './core/batch-job.js';
export { fanOutResultSchema } from './fan-out/completion.js';
export type { FanOutResult } from './fan-out/completion.js';
// Errors
export {
  SqsJobsError,
  ConfigError,
  UnknownJobError,
  ValidationError,
  PayloadTooLargeError,
  EnqueueBatchError,
  PublishBatchError,
  UnrecoverableError,
  RetryLaterError,
  QueueFullError,
} from './core/errors.js';
// Producing
export { Producer, createProducer } from './producer/producer.js';
export { configureDefaultProducer, enqueue, enqueueMany } from './producer/default.js';
export type { ProducerOptions, EnqueueOptions, EnqueueManyOptions, EnqueueResult } from './producer/options.js';
export type { AdmissionOptions, AdmissionState } from './producer/admission/admission.js';
// Working
export { Worker, createWorker } from './worker/worker.js';
export type { WorkerOptions } from './worker/options.js';
export type { MetricsSink, MetricPoint, DistributionPoint, SumPoint, MetricUnit } from './ports/metrics-sink.js';
export type { WorkerEvents, JobInfo, BatchInfo, DeadLetterReason } from './core/job-events.js';
// Status
export { getJob, JobStatusReader } from './status/get-job.js';
export type { JobView } from './status/get-job.js';
export { cancelJob, JobCanceller } from './status/cancel-job.js';
export type { CancelOptions } from './status/cancel-job.js';
export type { CancelResult } from './status/cancel.js';
// Queues
export { createQueues } from './ops/wiring.js';
export type { QueueSpec, QueuePair } from './ops/queues.js';
