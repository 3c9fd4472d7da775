import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/core/errors.js';
import {
  isFifoQueue,
  parseQueueUrl,
  queueAccountOf,
  queueNameOf,
  queueRegionOf,
  resolveAwsSettings,
  resolveCloudWatchSettings,
  resolveMemcached,
  resolveMemcachedSettings,
  resolveQueueUrl,
} from '../../../src/config/env.js';

describe('resolveAwsSettings', () => {
  it('takes options first, then SQS_JOBS_ENDPOINT, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL', () => {
    expect(resolveAwsSettings({ endpoint: 'http://127.0.0.1:1' }, { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:2' }).endpoint).toBe(
      'http://127.0.0.1:1',
    );
    expect(resolveAwsSettings({}, { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:2', AWS_ENDPOINT_URL: 'http://127.0.0.1:3' }).endpoint).toBe(
      'http://127.0.0.1:2',
    );
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

describe('resolveCloudWatchSettings', () => {
  it('follows AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL, never the SQS-only variables', () => {
    const sqsOnly = { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:9324', AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:9325' };
    expect(resolveCloudWatchSettings({}, { ...sqsOnly, AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }).endpoint).toBe('http://127.0.0.1:4566');
    expect(
      resolveCloudWatchSettings(
        {},
        { ...sqsOnly, AWS_ENDPOINT_URL: 'http://127.0.0.1:4566', AWS_ENDPOINT_URL_CLOUDWATCH: 'http://127.0.0.1:4567' },
      ).endpoint,
    ).toBe('http://127.0.0.1:4567');
    expect(resolveCloudWatchSettings({}, sqsOnly).endpoint).toBeUndefined();
    expect(
      resolveCloudWatchSettings({ endpoint: 'http://127.0.0.1:1' }, { AWS_ENDPOINT_URL_CLOUDWATCH: 'http://127.0.0.1:2' }).endpoint,
    ).toBe('http://127.0.0.1:1');
    expect(resolveCloudWatchSettings({}, { AWS_REGION: 'eu-west-1' }).region).toBe('eu-west-1');
  });

  it('names the variable that holds a malformed CloudWatch endpoint', () => {
    expect(() => resolveCloudWatchSettings({}, { AWS_ENDPOINT_URL_CLOUDWATCH: 'moto:4566' })).toThrow(
      /AWS_ENDPOINT_URL_CLOUDWATCH: must be an http\(s\) URL/,
    );
  });
});

describe('queue URL forms', () => {
  const forms: [string, string, { name: string; account: string; region: string | undefined }][] = [
    ['AWS', 'https://sqs.us-east-1.amazonaws.com/123456789012/jobs', { name: 'jobs', account: '123456789012', region: 'us-east-1' }],
    [
      'AWS legacy host',
      'https://eu-west-1.queue.amazonaws.com/123456789012/jobs',
      { name: 'jobs', account: '123456789012', region: 'eu-west-1' },
    ],
    [
      'AWS China',
      'https://sqs.cn-north-1.amazonaws.com.cn/123456789012/jobs',
      { name: 'jobs', account: '123456789012', region: 'cn-north-1' },
    ],
    ['LocalStack off', 'http://localhost:4566/000000000000/jobs', { name: 'jobs', account: '000000000000', region: undefined }],
    [
      'LocalStack path',
      'http://127.0.0.1:4566/queue/us-east-1/000000000000/jobs',
      { name: 'jobs', account: '000000000000', region: 'us-east-1' },
    ],
    [
      'LocalStack dynamic',
      'http://sqs.eu-central-1.localhost.localstack.cloud:4566/000000000000/jobs',
      { name: 'jobs', account: '000000000000', region: 'eu-central-1' },
    ],
    [
      'LocalStack domain',
      'http://eu-west-2.queue.localhost.localstack.cloud:4566/000000000000/jobs',
      { name: 'jobs', account: '000000000000', region: 'eu-west-2' },
    ],
    ['an internal DNS name', 'http://sqs.internal:9324/000000000000/jobs', { name: 'jobs', account: '000000000000', region: undefined }],
    ['ElasticMQ', 'http://127.0.0.1:9324/000000000000/jobs', { name: 'jobs', account: '000000000000', region: undefined }],
    ['moto on loopback', 'http://127.0.0.1:4566/123456789012/jobs', { name: 'jobs', account: '123456789012', region: undefined }],
    [
      'moto like AWS',
      'https://sqs.us-east-1.amazonaws.com/123456789012/jobs',
      { name: 'jobs', account: '123456789012', region: 'us-east-1' },
    ],
    [
      'FIFO, path strategy',
      'http://127.0.0.1:4566/queue/us-east-1/000000000000/orders.fifo',
      { name: 'orders.fifo', account: '000000000000', region: 'us-east-1' },
    ],
    [
      'FIFO, dynamic strategy',
      'http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/orders.fifo',
      { name: 'orders.fifo', account: '000000000000', region: 'us-east-1' },
    ],
    ['trailing slash', 'http://127.0.0.1:9324/000000000000/jobs/', { name: 'jobs', account: '000000000000', region: undefined }],
  ];

  it.each(forms)('accepts %s and reads name, account and region from it', (_form, url, expected) => {
    expect(resolveQueueUrl(url, {})).toBe(url);
    expect(resolveQueueUrl(undefined, { SQS_JOBS_QUEUE_URL: url })).toBe(url);
    expect(queueNameOf(url)).toBe(expected.name);
    expect(queueAccountOf(url)).toBe(expected.account);
    expect(queueRegionOf(url)).toBe(expected.region);
    expect(isFifoQueue(url)).toBe(expected.name.endsWith('.fifo'));
  });

  it.each([
    ['no account', 'http://127.0.0.1:4566/jobs', /must end in \/<account id>\/<queue name>/],
    ['too deep', 'http://127.0.0.1:4566/a/b/000000000000/jobs', /must end in \/<account id>\/<queue name>/],
    ['path form without a region', 'http://127.0.0.1:4566/queue/nowhere/000000000000/jobs', /where the path strategy puts a region/],
    ['a name SQS refuses', 'http://127.0.0.1:4566/000000000000/no%20spaces', /not a queue name/],
    ['a name over 80 characters', `http://127.0.0.1:4566/000000000000/${'q'.repeat(81)}`, /not a queue name/],
    ['a query string', 'http://127.0.0.1:4566/000000000000/jobs?x=1', /no query string/],
    ['not http', 'ftp://127.0.0.1/000000000000/jobs', /must be an http\(s\) queue URL/],
  ])('refuses %s, saying which rule', (_what, url, rule) => {
    expect(() => resolveQueueUrl(url, {})).toThrow(rule);
    expect(parseQueueUrl(url).ok).toBe(false);
  });
});

describe('resolveQueueUrl', () => {
  it('explains how to get a queue URL when there is none', () => {
    expect(() => resolveQueueUrl(undefined, {})).toThrow(/SQS_JOBS_QUEUE_URL.*queues create/);
  });

  it('refuses a URL without account and queue name', () => {
    expect(() => resolveQueueUrl(undefined, { SQS_JOBS_QUEUE_URL: 'http://127.0.0.1:4566/jobs' })).toThrow(
      /SQS_JOBS_QUEUE_URL: must end in/,
    );
    expect(resolveQueueUrl('https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo', {})).toBe(
      'https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo',
    );
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

describe('memcached over TLS: the tls:// list, SQS_JOBS_MEMCACHED_CA and SQS_JOBS_MEMCACHED_SERVERNAME', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqs-jobs-env-'));
  const ca = join(dir, 'ca.pem');
  writeFileSync(ca, rootCertificates[0]!); // any CA's PEM does
  const notPem = join(dir, 'key.txt');
  writeFileSync(notPem, 'not a certificate');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('accepts tls:// once, before the list, and refuses it elsewhere or any other scheme', () => {
    expect(resolveMemcached(undefined, { SQS_JOBS_MEMCACHED: 'tls://a.internal:11211,10.0.0.2:11211' })).toBe(
      'tls://a.internal:11211,10.0.0.2:11211',
    );
    expect(() => resolveMemcached('a:1,tls://b:2', {})).toThrow(
      /memcached: may start with tls:\/\/ \(once, for every server of the list\)/,
    );
    expect(() => resolveMemcached('memcached://a:1', {})).toThrow(/no other scheme/);
    expect(() => resolveMemcached('tls://a', {})).toThrow(/must be host:port, or several joined by commas, after tls:\/\/ for TLS/);
    expect(() => resolveMemcached(undefined, { SQS_JOBS_MEMCACHED: 'tls://a:0' })).toThrow(/SQS_JOBS_MEMCACHED: must have ports 1-65535/);
  });

  it('reads the CA once, at resolution, and takes the server name', () => {
    const settings = resolveMemcachedSettings(undefined, {
      SQS_JOBS_MEMCACHED: 'tls://127.0.0.1:11311',
      SQS_JOBS_MEMCACHED_CA: ca,
      SQS_JOBS_MEMCACHED_SERVERNAME: 'memcached.internal',
    });
    expect(settings?.servers).toBe('tls://127.0.0.1:11311');
    expect(settings?.tls?.ca?.toString()).toBe(rootCertificates[0]);
    expect(settings?.tls?.servername).toBe('memcached.internal');
    expect(Object.isFrozen(settings)).toBe(true);
    // the option wins over SQS_JOBS_MEMCACHED; the TLS settings still come from the environment
    expect(resolveMemcachedSettings('tls://b:1', { SQS_JOBS_MEMCACHED: 'a:1', SQS_JOBS_MEMCACHED_CA: ca })?.servers).toBe('tls://b:1');
    expect(resolveMemcachedSettings(undefined, { SQS_JOBS_MEMCACHED: 'tls://a:1' })).toEqual({ servers: 'tls://a:1', tls: {} });
    expect(resolveMemcachedSettings(undefined, { SQS_JOBS_MEMCACHED: 'a:1' })).toEqual({ servers: 'a:1' });
    expect(resolveMemcachedSettings(undefined, { SQS_JOBS_MEMCACHED_CA: ca })).toBeUndefined(); // no memcached: nothing to check
  });

  it('fails with a ConfigError naming the variable and the path when the CA cannot be read or is no PEM certificate', () => {
    const env = (path: string) => ({ SQS_JOBS_MEMCACHED: 'tls://a:1', SQS_JOBS_MEMCACHED_CA: path });
    const missing = join(dir, 'missing.pem');
    expect(() => resolveMemcachedSettings(undefined, env(missing))).toThrow(ConfigError);
    expect(() => resolveMemcachedSettings(undefined, env(missing))).toThrow(
      `invalid memcached TLS settings: SQS_JOBS_MEMCACHED_CA: cannot read ${missing} (ENOENT): it must name a PEM file of the CA`,
    );
    expect(() => resolveMemcachedSettings(undefined, env(dir))).toThrow(/SQS_JOBS_MEMCACHED_CA: cannot read .* \(EISDIR\)/);
    expect(() => resolveMemcachedSettings(undefined, env(notPem))).toThrow(
      `invalid memcached TLS settings: SQS_JOBS_MEMCACHED_CA: ${notPem} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    );
  });

  it('refuses a server name that is no DNS name, and TLS settings beside a plain list', () => {
    const tls = (servername: string) => ({ SQS_JOBS_MEMCACHED: 'tls://a:1', SQS_JOBS_MEMCACHED_SERVERNAME: servername });
    expect(() => resolveMemcachedSettings(undefined, tls('10.0.0.1'))).toThrow(
      /SQS_JOBS_MEMCACHED_SERVERNAME: must be a DNS name, not an IP address/,
    );
    expect(() => resolveMemcachedSettings(undefined, tls('bad name'))).toThrow(
      /SQS_JOBS_MEMCACHED_SERVERNAME: must be a DNS name the certificate holds/,
    );
    expect(() => resolveMemcachedSettings('a:1', { SQS_JOBS_MEMCACHED_CA: ca, SQS_JOBS_MEMCACHED_SERVERNAME: 'm.internal' })).toThrow(
      'invalid memcached TLS settings: SQS_JOBS_MEMCACHED_CA and SQS_JOBS_MEMCACHED_SERVERNAME set, but the memcached servers are plain host:port (a:1): write them as tls://a:1 for TLS, or unset SQS_JOBS_MEMCACHED_CA and SQS_JOBS_MEMCACHED_SERVERNAME',
    );
  });
});

describe('createSqsClient credentials', () => {
  it('uses the credentials in the env it is given for a loopback endpoint, else placeholders', async () => {
    const { createSqsClient } = await import('../../../src/adapters/aws-clients.js');
    const given = createSqsClient(
      { endpoint: 'http://127.0.0.1:9324', region: 'us-east-1' },
      {},
      { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' },
    );
    expect(await given.config.credentials()).toMatchObject({ accessKeyId: 'AK', secretAccessKey: 'SK' });
    const none = createSqsClient({ endpoint: 'http://127.0.0.1:9324', region: 'us-east-1' }, {}, {});
    expect(await none.config.credentials()).toMatchObject({ accessKeyId: 'test' });
    given.destroy();
    none.destroy();
  });

  it("counts LocalStack's localhost.localstack.cloud names as loopback", async () => {
    const { createSqsClient } = await import('../../../src/adapters/aws-clients.js');
    // Credentials from the env given are used only for loopback endpoints (else the SDK's chain).
    const client = createSqsClient(
      { endpoint: 'http://sqs.us-east-1.localhost.localstack.cloud:4566', region: 'us-east-1' },
      {},
      { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' },
    );
    expect(await client.config.credentials()).toMatchObject({ accessKeyId: 'AK' });
    client.destroy();
  });
});
