import { describe, expect, it } from 'vitest';
import { createS3Client, resolveS3Settings, S3Archive, s3Failure } from '../../../src/adapters/s3-archive.js';

const names = { endpoint: '--s3-endpoint', region: '--region' };

describe('the S3 archive adapter', () => {
  it('with a KMS key, asks for SSE-KMS under it and a Bucket Key on every write; without, names no encryption (the bucket default applies)', () => {
    const client = createS3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }, {}, {});
    const kms = new S3Archive(client, { bucket: 'b', kmsKeyId: 'alias/dlq-archive' }).putInput('p/k.json', '{}');
    expect(kms).toMatchObject({
      Bucket: 'b',
      Key: 'p/k.json',
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'alias/dlq-archive',
      BucketKeyEnabled: true,
    });
    const plain = new S3Archive(client, { bucket: 'b' }).putInput('p/k.json', '{}');
    expect(plain).not.toHaveProperty('ServerSideEncryption');
    expect(plain).not.toHaveProperty('SSEKMSKeyId');
    expect(plain).not.toHaveProperty('BucketKeyEnabled');
    client.destroy();
  });

  it("answers S3's errors as SqsJobsErrors naming the bucket and key, and what to do", async () => {
    const s3 = (name: string, status: number, message = '') =>
      Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
    expect(
      s3Failure('list', 'b1', 'dlq/dead-letters/', 's3:ListBucket', s3('NoSuchBucket', 404, 'The specified bucket does not exist')),
    ).toMatchObject({
      code: 'CONFIG_INVALID',
      message:
        'could not list s3://b1/dlq/dead-letters/: no bucket named b1 (NoSuchBucket: The specified bucket does not exist); create it, or fix the s3:// URL',
    });
    expect(s3Failure('reach', 'b1', '', 's3:ListBucket', s3('NotFound', 404)).message).toMatch(/no bucket named b1 \(NotFound\)/);
    expect(s3Failure('read', 'b1', 'k', 's3:GetObject', s3('AccessDenied', 403, 'Access Denied'))).toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(
        /^could not read s3:\/\/b1\/k: access denied \(AccessDenied: Access Denied\); this role needs s3:GetObject/,
      ),
    });
    expect(s3Failure('write', 'b1', 'k', 's3:PutObject', s3('InternalError', 500, 'We encountered an internal error'))).toMatchObject({
      code: 'STORE_UNREACHABLE',
    });
    // And from the adapter itself: a server that does not answer.
    const client = createS3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:1' }, { maxAttempts: 1 }, {});
    await expect(new S3Archive(client, { bucket: 'b1' }).list('p/')).rejects.toMatchObject({
      code: 'STORE_UNREACHABLE',
      message: expect.stringMatching(/^could not list s3:\/\/b1\/p\/: /),
    });
    client.destroy();
  });

  it('addresses buckets by path on an endpoint of its own (LocalStack, moto), by host on AWS', async () => {
    const local = createS3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:4566' }, {}, {});
    const aws = createS3Client({ region: 'us-east-1', endpoint: undefined }, {}, {});
    expect(local.config.forcePathStyle).toBe(true);
    expect(aws.config.forcePathStyle).toBe(false);
    local.destroy();
    aws.destroy();
  });

  it("finds S3's endpoint in AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, never in the SQS variables", () => {
    const env = {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      SQS_JOBS_ENDPOINT: 'http://127.0.0.1:9',
      AWS_ENDPOINT_URL_SQS: 'http://127.0.0.1:8',
    };
    expect(resolveS3Settings({}, env, names).endpoint).toBe('http://127.0.0.1:4566');
    expect(resolveS3Settings({}, { ...env, AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:4567' }, names).endpoint).toBe('http://127.0.0.1:4567');
    expect(resolveS3Settings({ endpoint: 'http://127.0.0.1:7' }, env, names).endpoint).toBe('http://127.0.0.1:7');
    expect(resolveS3Settings({}, { SQS_JOBS_ENDPOINT: 'http://127.0.0.1:9' }, names).endpoint).toBeUndefined();
    expect(() => resolveS3Settings({ endpoint: 'not a url' }, {}, names)).toThrow(/--s3-endpoint/);
  });
});
