/**
 * `sqs-jobs/adapters`: the ports the core talks through, and the adapters that implement them
 * over AWS and memcached. Hand a worker or producer your own (`createWorker({ queue, lock })`,
 * `store`) to run sqs-jobs on something else; `sqs-jobs/testing` has in-memory ones.
 *
 * @module sqs-jobs/adapters
 */
export { SqsQueuePort } from './sqs-queue.js';
export { SqsQueueAdmin } from './sqs-admin.js';
export { SnsTopics, createSnsClient } from './sns-topics.js';
export type { TopicPort, TopicAdmin, TopicSubscription, SubscriptionSettings } from '../ports/topics.js';
export { CloudWatchReader } from './cloudwatch-reader.js';
export { MemcachedLock } from './memcached-lock.js';
export type { MemcachedLockOptions } from './memcached-lock.js';
export type { MemcachedTlsOptions } from './memcached-socket.js';
export { DynamoJobStore, createJobTable } from './dynamodb-store.js';
export { createSqsClient, createCloudWatchClient, createDynamoClient } from './aws-clients.js';
export type { QueuePort, DeadLetterTarget } from '../ports/queue.js';
export type { QueueAdmin, QueueCounts, QueueSettings } from '../ports/queue-admin.js';
export type { MetricsReader, MetricQuery, Point } from '../ports/metrics-reader.js';
export type {
  BatchEntry,
  BatchFailure,
  FailureKind,
  MessageAttribute,
  MessageAttributes,
  OutgoingMessage,
  ReceivedMessage,
} from '../core/message.js';
export type { JobLock, ClaimResult, ExtendResult, ClaimingMessage } from '../ports/lock.js';
export type { Permits } from '../ports/permits.js';
export type { RateLimits, RateLimit, RateSlot } from '../ports/rate-limits.js';
export type { Allowances, Allowance } from '../ports/allowances.js';
export type { DrainMeter } from '../ports/drain-meter.js';
export type { TenantMeter, TenantReport, TenantFigures, TenantTotals } from '../ports/tenant-meter.js';
export type { JobStore } from '../ports/job-store.js';
export type { StatusStore, Transition, ProgressUpdate, JobStatus, JobState, JobViewState, Progress } from '../ports/status-store.js';
export type { FanOutStore, ChildEnd, ChildCount, FanOutStatus, CompletionSpec } from '../ports/fan-out-store.js';
