import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/*
 * The names each entry of the package exports, written out: adding one, or taking one away, is a
 * change to what users may import, and lands with a line in the CHANGELOG (the migration table of
 * 0.x says what to use for each name taken away). Everything else in src/ is internal.
 */
const SURFACE = {
  'sqs-jobs': {
    file: 'src/index.ts',
    values: [
      'defineJob',
      'defineBatchJob',
      'defineEvent',
      'createPublisher',
      'createEvents',
      'fanOutResultSchema',
      'SqsJobsError',
      'ConfigError',
      'UnknownJobError',
      'ValidationError',
      'PayloadTooLargeError',
      'EnqueueBatchError',
      'PublishBatchError',
      'UnrecoverableError',
      'RetryLaterError',
      'QueueFullError',
      'JobPausedError',
      'createProducer',
      'configureDefaultProducer',
      'enqueue',
      'enqueueMany',
      'createWorker',
      'getJob',
      'JobStatusReader',
      'cancelJob',
      'defineSchedule',
      'createSchedules',
      'createPauses',
      'createQueues',
    ],
    types: [
      'JobDefinition',
      'JobContext',
      'BatchJobDefinition',
      'BatchItem',
      'BatchResult',
      'EventDefinition',
      'Publisher',
      'PublisherOptions',
      'PublishOptions',
      'Producer',
      'ProducerOptions',
      'EnqueueOptions',
      'Worker',
      'WorkerOptions',
      'WorkerEvents',
      'JobInfo',
      'MetricsSink',
      'MetricPoint',
      'JobView',
      'ScheduleDefinition',
      'Schedules',
      'Pauses',
      'QueueSpec',
    ],
  },
  'sqs-jobs/adapters': {
    file: 'src/adapters/index.ts',
    values: [
      'SqsQueuePort',
      'SnsTopics',
      'createSnsClient',
      'MemcachedLock',
      'DynamoLock',
      'DynamoJobStore',
      'createSqsClient',
      'createCloudWatchClient',
      'createDynamoClient',
    ],
    types: [
      'MemcachedLockOptions',
      'QueuePort',
      'ReceivedMessage',
      'OutgoingMessage',
      'TopicPort',
      'JobLock',
      'Permits',
      'RateLimits',
      'Allowances',
      'DrainMeter',
      'TenantMeter',
      'JobStore',
    ],
  },
  'sqs-jobs/http': {
    file: 'src/http/index.ts',
    values: ['createJobsApi', 'nodeHandler', 'fastifyPlugin', 'honoHandler', 'createDashboard'],
    types: ['ApiOptions', 'DashboardOptions', 'Authorize'],
  },
  'sqs-jobs/testing': {
    file: 'src/testing/index.ts',
    values: [
      'MemoryQueue',
      'MemoryKeyValues',
      'MemoryLock',
      'MemoryPermits',
      'MemoryRateLimits',
      'MemoryAllowances',
      'MemoryJobStore',
      'MemoryDrainMeter',
      'MemoryTenantMeter',
      'runHandler',
      'runBatchHandler',
      'deliverToLambda',
    ],
    types: [],
  },
  'sqs-jobs/lambda': {
    file: 'src/lambda/index.ts',
    values: ['createLambdaHandler'],
    types: ['LambdaHandlerOptions', 'LambdaHandler', 'SqsEvent', 'SqsBatchResponse'],
  },
  'sqs-jobs/cdk': {
    file: 'src/cdk/index.ts',
    values: ['SqsJobs', 'eventSettingsOf', 'scheduleSettingsOf', 'DEFAULT_SETTINGS', 'resolveSettings'],
    types: ['SqsJobsProps', 'JobAlarms'],
  },
} as const;

/** An entry's exported names as its file writes them: `export { a, type B } from` and `export type { C } from`, nothing else. */
function exportsOf(file: string): { values: string[]; types: string[] } {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const values: string[] = [];
  const types: string[] = [];
  const statements = [...text.matchAll(/export\s+(type\s+)?\{([^}]*)\}\s*from\s*'[^']+';/g)];
  const rest = text.replace(/export\s+(type\s+)?\{([^}]*)\}\s*from\s*'[^']+';/g, '').trim();
  if (rest !== '') throw new Error(`${file}: an entry only re-exports named things; found: ${rest.slice(0, 80)}`);
  for (const [, typeOnly, list] of statements)
    for (const raw of list!.split(',')) {
      const name = raw.trim();
      if (name === '') continue;
      if (typeOnly !== undefined || name.startsWith('type ')) types.push(name.replace(/^type\s+/, ''));
      else values.push(name);
    }
  return { values, types };
}

describe('the public surface', () => {
  for (const [entry, want] of Object.entries(SURFACE))
    it(`${entry} exports its listed names and no other`, () => {
      const got = exportsOf(want.file);
      expect(got.values.sort()).toEqual([...want.values].sort());
      expect(got.types.sort()).toEqual([...want.types].sort());
    });

  it('what an entry exports as a value is one at run time', async () => {
    for (const [entry, module] of [
      ['sqs-jobs', await import('../../src/index.js')],
      ['sqs-jobs/adapters', await import('../../src/adapters/index.js')],
      ['sqs-jobs/http', await import('../../src/http/index.js')],
      ['sqs-jobs/testing', await import('../../src/testing/index.js')],
      ['sqs-jobs/lambda', await import('../../src/lambda/index.js')],
    ] as const)
      expect(Object.keys(module).sort(), entry).toEqual([...SURFACE[entry].values].sort());
  });

  // Under 100 until the Lambda entry (6 names: its handler, its options, the event's types, the testing helper).
  it('stays at about 50 names in sqs-jobs (45, 4 for schedules, 3 for pauses) and under 110 in all', () => {
    const count = (e: { values: readonly string[]; types: readonly string[] }) => e.values.length + e.types.length;
    expect(count(SURFACE['sqs-jobs'])).toBeLessThanOrEqual(52);
    expect(Object.values(SURFACE).reduce((n, e) => n + count(e), 0)).toBeLessThan(110);
  });
});
