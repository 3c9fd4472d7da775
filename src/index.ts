/**
 * sqs-jobs: background jobs on Amazon SQS. Define jobs, enqueue them, run workers, read job status.
 * Ports and adapters: `sqs-jobs/adapters`. In-memory fakes and a handler runner for tests:
 * `sqs-jobs/testing`.
 *
 * @module sqs-jobs
 */
// Jobs
export { defineJob } from './core/job.js';
export type { JobDefinition, JobContext } from './core/job.js';
export { defineBatchJob } from './core/batch-job.js';
export type { BatchJobDefinition, BatchItem, BatchResult } from './core/batch-job.js';
// Events
export { defineEvent } from './core/event.js';
export type { EventDefinition } from './core/event.js';
export { createPublisher } from './producer/create-publisher.js';
export type { Publisher, PublisherOptions } from './producer/create-publisher.js';
export type { PublishOptions } from './producer/publish.js';
export { createEvents } from './ops/wiring.js';
// Fan-out
export { fanOutResultSchema } from './fan-out/completion.js';
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
export { JobPausedError } from './core/pause.js';
// Producing
export { createProducer } from './producer/producer.js';
export type { Producer } from './producer/producer.js';
export { configureDefaultProducer, enqueue, enqueueMany } from './producer/default.js';
export type { ProducerOptions, EnqueueOptions } from './producer/options.js';
// Working
export { createWorker } from './worker/worker.js';
export type { Worker } from './worker/worker.js';
export type { WorkerOptions } from './worker/options.js';
export type { WorkerEvents, JobInfo } from './core/job-events.js';
export type { MetricsSink, MetricPoint } from './ports/metrics-sink.js';
// Status
export { getJob, JobStatusReader } from './status/get-job.js';
export type { JobView } from './status/get-job.js';
export { cancelJob } from './status/cancel-job.js';
// Schedules
export { defineSchedule } from './schedules/define.js';
export type { ScheduleDefinition } from './schedules/define.js';
export { createSchedules } from './ops/wiring.js';
export type { Schedules } from './ops/schedules.js';
// Pauses
export { createPauses } from './ops/wiring.js';
export type { Pauses } from './ops/pauses.js';
// Queues
export { createQueues } from './ops/wiring.js';
export type { QueueSpec } from './ops/queues.js';
