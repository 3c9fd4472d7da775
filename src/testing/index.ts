/**
 * `sqs-jobs/testing`: unit-test jobs, and code that uses sqs-jobs, without servers. The in-memory
 * queue, lock, permits and job store pass the same contract tests as the SQS, memcached and
 * DynamoDB adapters.
 *
 * @module sqs-jobs/testing
 */
export { MemoryQueue } from './memory-queue.js';
export { MemoryKeyValues } from './memory-key-values.js';
export { MemoryLock } from './memory-lock.js';
export { MemoryPermits } from './memory-permits.js';
export { MemoryRateLimits } from './memory-rate-limits.js';
export { MemoryAllowances } from './memory-allowances.js';
export { MemoryJobStore } from './memory-job-store.js';
export { MemoryDrainMeter } from './memory-drain-meter.js';
export { MemoryTenantMeter } from './memory-tenant-meter.js';
export { runHandler, runBatchHandler } from './run-handler.js';
export { deliverToLambda } from './lambda.js';
