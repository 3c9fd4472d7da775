import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { isFifoQueue, queueNameOf, resolveAwsSettings, resolveMemcached, resolveQueueUrl } from '../../src/config.js';

describe('resolveAwsSettings', () => {
  it('takes options first, then SQS_JOBS_ENDPOINT, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL', () => {
    expect(resolveAwsSettings({ endpoint: 'http://127.0.0.1:1' }, { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:2' }).endpoint).toBe('http://127.0.0.1:1');
    expect(resolveAwsSettings({}, { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:2', AWS_ENDPOINT_URL: 'http://127.0.0.1:3' }).endpoint).toBe('http://127.0.0.1:2');
    expect(resolveAwsSettings({}, { AWS_ENDPOINT_URL: 'http://127.0.0.1:3' }).endpoint).toBe('http://127.0.0.1:3');
    expect(resolveAwsSettings({}, {}).endpoint).toBeUndefined();
  });

  it('defaults the region to us-east-1 and reads AWS_REGION', () => {
    expect(resolveAwsSettings({}, {}).region).toBe('us-east-1');
    expect(resolveAwsSettings({}, { AWS_REGION: 'eu-west-1' }).region).toBe('eu-west-1');
  });

  it('names the variable that holds a malformed endpoint', () => {
    expect(() => resolveAwsSettings({}, { AWS_ENDPOINT_URL: 'localhost:4566' })).toThrow(ConfigError);
    expect(() => resolveAwsSettings({}, { AWS_ENDPOINT_URL: 'localhost:4566' })).toThrow(/AWS_ENDPOINT_URL: must be an http\(s\) URL/);
    expect(() => resolveAwsSettings({ region: 'mars' }, {})).toThrow(/region: must be an AWS region/);
  });
});

describe('resolveQueueUrl', () => {
  it('explains how to get a queue URL when there is none', () => {
    expect(() => resolveQueueUrl(undefined, {})).toThrow(/SQS_JOBS_QUEUE_URL.*queues create/);
  });

  it('refuses a URL without account and queue name', () => {
    expect(() => resolveQueueUrl(undefined, { SQS_JOBS_QUEUE_URL: 'http://127.0.0.1:4566/jobs' })).toThrow(/SQS_JOBS_QUEUE_URL: must end in/);
    expect(resolveQueueUrl('https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo', {})).toBe('https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo');
  });

  it('knows FIFO queues and queue names by URL', () => {
    expect(isFifoQueue('http://h/1/q.fifo')).toBe(true);
    expect(isFifoQueue('http://h/1/q')).toBe(false);
    expect(queueNameOf('http://h/1/q.fifo')).toBe('q.fifo');
  });
});

describe('resolveMemcached', () => {
  it('accepts host:port lists and refuses anything else', () => {
    expect(resolveMemcached(undefined, { SQS_JOBS_MEMCACHED: '127.0.0.1:11211,10.0.0.2:11211' })).toBe('127.0.0.1:11211,10.0.0.2:11211');
    expect(resolveMemcached(undefined, {})).toBeUndefined();
    expect(() => resolveMemcached('127.0.0.1', {})).toThrow(/memcached: must be host:port/);
  });
});

describe('createSqsClient credentials', () => {
  it('uses the credentials in the env it is given for a loopback endpoint, else placeholders', async () => {
    const { createSqsClient } = await import('../../src/aws/clients.js');
    const given = createSqsClient({ endpoint: 'http://127.0.0.1:9324', region: 'us-east-1' }, {}, { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' });
    expect(await given.config.credentials()).toMatchObject({ accessKeyId: 'AK', secretAccessKey: 'SK' });
    const none = createSqsClient({ endpoint: 'http://127.0.0.1:9324', region: 'us-east-1' }, {}, {});
    expect(await none.config.credentials()).toMatchObject({ accessKeyId: 'test' });
    given.destroy();
    none.destroy();
  });
});
