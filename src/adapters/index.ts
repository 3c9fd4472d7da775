/**
 * `sqs-jobs/adapters`: the ports the core talks through, and the adapters that implement them
 * over AWS and memcached. Hand a worker or producer your own (`createWorker({ queue, lock })`,
 * `store`) to run sqs-jobs on something else; `sqs-jobs/testing` has in-memory ones.
 *
 * @module sqs-jobs/adapters
 */
// Adapters: build one yourself to give it your own client or settings.
export { SqsQueuePort } from './sqs-queue.js';
export { SnsTopics, createSnsClient } from './sns-topics.js';
export { MemcachedLock } from './memcached-lock.js';
export type { MemcachedLockOptions } from './memcached-lock.js';
export { DynamoLock } from './dynamodb-lock.js';
export { DynamoJobStore } from './dynamodb-store.js';
export { createSqsClient, createCloudWatchClient, createDynamoClient } from './aws-clients.js';
// Ports: what an option takes in place of an adapter (see each option in the docs).
export type { QueuePort } from '../ports/queue.js';
export type { ReceivedMessage, OutgoingMessage } from '../core/message.js';
export type { TopicPort } from '../ports/topics.js';
export type { JobLock } from '../ports/lock.js';
export type { Permits } from '../ports/permits.js';
export type { RateLimits } from '../ports/rate-limits.js';
export type { Allowances } from '../ports/allowances.js';
export type { DrainMeter } from '../ports/drain-meter.js';
export type { TenantMeter } from '../ports/tenant-meter.js';
export type { JobStore } from '../ports/job-store.js';
