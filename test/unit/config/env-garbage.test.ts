import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { createProducer } from '../../../src/producer/producer.js';
import { createWorker } from '../../../src/worker/worker.js';

/**
 * Every option of createProducer and createWorker, and every variable they read, fed garbage:
 * each must fail at construction with a ConfigError (CONFIG_INVALID) that names the setting and
 * the rule; never a TypeError, a zod error or a stack trace from deep inside.
 */

const job = defineJob({ name: 'noop', args: z.object({}), handle: async () => {} });
const QUEUE = 'http://127.0.0.1:4566/123456789012/jobs';

function configErrorOf(make: () => unknown): ConfigError {
  let thrown: unknown;
  try {
    make();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'expected a ConfigError, nothing was thrown').toBeDefined();
  expect(thrown, `expected a ConfigError, got ${String(thrown)}`).toBeInstanceOf(ConfigError);
  const error = thrown as ConfigError;
  expect(error.code).toBe('CONFIG_INVALID');
  expect(error.message).not.toMatch(/ZodError|TypeError|\n\s+at /);
  return error;
}

/** [setting as named in the message, value, the rule the message must state] */
type Case = [string, unknown, RegExp];

describe('createProducer with garbage', () => {
  const options: Case[] = [
    ['queueUrl', 'jobs', /must be an http\(s\) queue URL/],
    ['queueUrl', 'http://127.0.0.1:4566/jobs', /must end in \/<account id>\/<queue name>/],
    ['queueUrl', 42, /expected string/],
    ['endpoint', 'localhost:4566', /must be an http\(s\) URL/],
    ['endpoint', 4566, /expected string/],
    ['region', 'mars', /must be an AWS region/],
    ['jobs', 'noop', /must be an array of jobs made by defineJob\(\) or defineBatchJob\(\) \(or a producer's jobs\)/],
    ['jobs[0]', [{ name: 'noop' }], /must be a job made by defineJob\(\)/],
    ['maxMessageBytes', 'big', /expected number/],
    ['maxMessageBytes', 10, /must be >= 1024/],
    ['maxMessageBytes', 2_000_000, /must be <= 1048576/],
    ['maxMessageBytes', 2048.5, /whole number/],
    ['client', {}, /was removed: pass queue: new SqsQueuePort\(client\)/],
    ['spillover.queueUrl', { queueUrl: 'jobs-spill' }, /must be an http\(s\) queue URL/],
    ['spillover.burst', { queueUrl: QUEUE, burst: 0 }, /must be >= 1/],
    ['fairness', { spilloverQueueUrl: QUEUE }, /was renamed: use spillover/],
    ['bogus', 1, /Unrecognized key: "bogus"/],
  ];
  it.each(options)('option %s = %j', (field, value, rule) => {
    const [key] = field.split(/[.[]/);
    const error = configErrorOf(() => createProducer({ queueUrl: QUEUE, [key!]: value } as never, {}));
    expect(error.message).toContain(field === 'bogus' ? 'options: ' : `options.${field}: `);
    expect(error.message).toMatch(rule);
  });

  it('options that are not an object', () => {
    expect(configErrorOf(() => createProducer(null as never, {})).message).toMatch(/options: .*expected object/);
  });

  const env: Case[] = [
    ['SQS_JOBS_QUEUE_URL', 'jobs', /must be an http\(s\) queue URL/],
    ['SQS_JOBS_QUEUE_URL', 'http://127.0.0.1:4566/queue/000000000000/jobs', /must end in/],
    ['SQS_JOBS_ENDPOINT', 'elasticmq:9324', /must be an http\(s\) URL/],
    ['AWS_ENDPOINT_URL_SQS', 'nope', /must be an http\(s\) URL/],
    ['AWS_ENDPOINT_URL', 'ftp://x', /must be an http\(s\) URL/],
    ['AWS_REGION', 'Europe', /must be an AWS region/],
    ['AWS_DEFAULT_REGION', 'us_east_1', /must be an AWS region/],
  ];
  it.each(env)('variable %s = %j', (name, value, rule) => {
    const error = configErrorOf(() => createProducer({}, { SQS_JOBS_QUEUE_URL: QUEUE, [name]: value as string }));
    expect(error.message).toContain(`${name}: `);
    expect(error.message).toMatch(rule);
    expect(error.message).toContain(JSON.stringify(value));
  });
});

describe('createWorker with garbage', () => {
  const options: Case[] = [
    ['queues', 'jobs', /must be an array of queue URLs/],
    ['queues', [], /must name at least one queue/],
    ['queues[0]', ['jobs'], /must be an http\(s\) queue URL/],
    ['queues[0]', [42], /must be a queue URL or \{ url, weight\?, deadLetterQueueUrl\?, priority\? \}/],
    ['queues[0].url', [{ url: 'jobs' }], /must be an http\(s\) queue URL/],
    ['queues[0].weight', [{ url: QUEUE, weight: 0 }], /must be 1-100/],
    ['queues[0].weight', [{ url: QUEUE, weight: 'heavy' }], /expected number/],
    ['queues[0].deadLetterQueueUrl', [{ url: QUEUE, deadLetterQueueUrl: 'dlq' }], /must be an http\(s\) queue URL/],
    ['queues[0].priority', [{ url: QUEUE, priority: 1 }], /must be high, normal or low/],
    ['queues[0]', [{ url: QUEUE, rank: 1 }], /Unrecognized key: "rank"/],
    ['jobs', 'noop', /must be an array of jobs made by defineJob\(\) or defineBatchJob\(\) \(or a producer's jobs\)/],
    ['jobs', [], /must register at least one job/],
    ['jobs[0]', [{ name: 'noop' }], /must be a job made by defineJob\(\)/],
    ['concurrency', 0, /must be >= 1/],
    ['concurrency', 'ten', /expected number/],
    ['concurrency', 1.5, /whole number/],
    ['prefetch', -1, /must be 0-1000/],
    ['waitTimeSeconds', 21, /must be 0-20/],
    ['visibilityTimeoutSeconds', 1, /must be >= 2/],
    ['visibilityTimeoutSeconds', 50_000, /must be <= 43200/],
    ['heartbeatIntervalMs', 50, /must be >= 100/],
    ['heartbeatIntervalMs', 40_000, /must be less than visibilityTimeoutSeconds/],
    ['deleteFlushMs', 20_000, /must be 0-10000/],
    ['shutdownTimeoutMs', -1, /must be >= 0/],
    ['abortGraceMs', 120_000, /must be 0-60000/],
    ['memcached', 'memcached', /must be host:port/],
    ['memcached', '127.0.0.1:99999', /ports 1-65535/],
    ['memcached', 11211, /expected string/],
    ['lock', 'memcached', /must implement JobLock/],
    ['permits', { take: 1 }, /must implement Permits/],
    ['tenantCaps.acme', { acme: 0 }, /must be >= 1/],
    ['capDelaySeconds', 901, /must be <= 900/],
    ['fairness', { caps: { acme: 2 } }, /was renamed: use tenantCaps/],
    ['queue', 'sqs', /must implement QueuePort/],
    ['lockFailClosed', 'yes', /expected boolean/],
    ['lockTimeoutMs', 1, /must be 10-10000/],
    ['completedTtlSeconds', 0, /must be >= 1/],
    ['lockKeyPrefix', 'has space', /printable ASCII without spaces/],
    ['endpoint', 'localhost:4566', /must be an http\(s\) URL/],
    ['region', 'mars', /must be an AWS region/],
    ['clients', {}, /was removed: pass queue: new SqsQueuePort\(pollClient, controlClient\)/],
    ['logger', 'console', /must be a pino logger/],
    ['logArgs', 'no', /expected boolean/],
    ['metrics', 'cloudwatch', /expected object/],
    ['metrics.sink', { sink: 'prometheus' }, /must be 'cloudwatch', 'emf', 'off' or an object with publish/],
    ['metrics.namespace', { namespace: 'AWS/SQS' }, /must not start with AWS\//],
    ['metrics.namespace', { namespace: 'has space' }, /letters, digits/],
    ['metrics.flushIntervalMs', { flushIntervalMs: 10 }, /must be >= 1000/],
    ['metrics.endpoint', { endpoint: 'moto:4566' }, /must be an http\(s\) URL/],
    ['metrics', { bogus: 1 }, /Unrecognized key: "bogus"/],
    ['handleSignals', 'yes', /expected boolean/],
    ['options', { bogus: 1 }, /Unrecognized key: "bogus"/],
  ];
  it.each(options)('option %s = %j', (field, value, rule) => {
    const [key] = field.split(/[.[]/);
    const given = field === 'options' ? (value as object) : { [key!]: value };
    const error = configErrorOf(() => createWorker({ queues: [QUEUE], jobs: [job], handleSignals: false, ...given } as never, {}));
    expect(error.message).toContain(field === 'options' ? 'options: ' : `options.${field}: `);
    expect(error.message).toMatch(rule);
  });

  it('options that are not an object', () => {
    expect(configErrorOf(() => createWorker(undefined as never, {})).message).toMatch(/options: .*expected object/);
  });

  const env: Case[] = [
    ['SQS_JOBS_QUEUE_URL', 'jobs', /must be an http\(s\) queue URL/],
    ['SQS_JOBS_ENDPOINT', 'elasticmq:9324', /must be an http\(s\) URL/],
    ['AWS_ENDPOINT_URL_SQS', 'nope', /must be an http\(s\) URL/],
    ['AWS_ENDPOINT_URL', 'nope', /must be an http\(s\) URL/],
    ['AWS_ENDPOINT_URL_CLOUDWATCH', 'moto:4566', /must be an http\(s\) URL/],
    ['AWS_REGION', 'mars', /must be an AWS region/],
    ['AWS_DEFAULT_REGION', 'mars', /must be an AWS region/],
    ['SQS_JOBS_MEMCACHED', 'localhost', /must be host:port/],
    ['SQS_JOBS_METRICS', 'prometheus', /must be cloudwatch, emf or off/],
    ['SQS_JOBS_METRICS_NAMESPACE', 'AWS/Mine', /must not start with AWS\//],
    ['SQS_JOBS_LOG_LEVEL', 'loud', /must be one of fatal, error, warn, info, debug, trace, silent/],
  ];
  it.each(env)('variable %s = %j', (name, value, rule) => {
    const error = configErrorOf(() =>
      createWorker({ jobs: [job], handleSignals: false }, { SQS_JOBS_QUEUE_URL: QUEUE, [name]: value as string }),
    );
    expect(error.message).toContain(`${name}: `);
    expect(error.message).toMatch(rule);
    expect(error.message).toContain(JSON.stringify(value));
  });

  it('hides a password in a memcached address it echoes', () => {
    const error = configErrorOf(() =>
      createWorker({ jobs: [job], queues: [QUEUE], handleSignals: false }, { SQS_JOBS_MEMCACHED: 'user:secret@cache:11211' }),
    );
    expect(error.message).not.toContain('secret');
  });
});
