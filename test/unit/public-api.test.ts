import { describe, expect, it } from 'vitest';

// The public entries and what each exports at run time (types aside): a name added or removed here
// is a change to the API, to be listed in CHANGELOG.md.
describe('the public API', () => {
  it("'sqs-jobs' exports the job vocabulary, the producer, the worker, status and queue creation", async () => {
    expect(Object.keys(await import('../../src/index.js')).sort()).toEqual(
      [
        'ConfigError',
        'EnqueueBatchError',
        'PublishBatchError',
        'JobRegistry',
        'JobCanceller',
        'JobStatusReader',
        'PayloadTooLargeError',
        'Producer',
        'QueueFullError',
        'RetryLaterError',
        'SqsJobsError',
        'UnknownJobError',
        'UnrecoverableError',
        'cancelJob',
        'ValidationError',
        'Worker',
        'configureDefaultProducer',
        'createProducer',
        'createPublisher',
        'createEvents',
        'createQueues',
        'createWorker',
        'defineBatchJob',
        'defineEvent',
        'defineJob',
        'enqueue',
        'enqueueMany',
        'fanOutResultSchema',
        'getJob',
      ].sort(),
    );
  });

  it("'sqs-jobs/adapters' exports the adapters and the SDK clients", async () => {
    expect(Object.keys(await import('../../src/adapters/index.js')).sort()).toEqual(
      [
        'CloudWatchReader',
        'DynamoJobStore',
        'MemcachedLock',
        'SnsTopics',
        'SqsQueueAdmin',
        'SqsQueuePort',
        'createCloudWatchClient',
        'createDynamoClient',
        'createJobTable',
        'createSnsClient',
        'createSqsClient',
      ].sort(),
    );
  });

  it("'sqs-jobs/testing' exports the in-memory fakes and the handler runners", async () => {
    expect(Object.keys(await import('../../src/testing/index.js')).sort()).toEqual([
      'MemoryAllowances',
      'MemoryDrainMeter',
      'MemoryJobStore',
      'MemoryKeyValues',
      'MemoryLock',
      'MemoryPermits',
      'MemoryQueue',
      'MemoryRateLimits',
      'MemoryTenantMeter',
      'runBatchHandler',
      'runHandler',
    ]);
  });
});
