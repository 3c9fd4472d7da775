import {
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type PutObjectCommandInput,
  S3Client,
} from '@aws-sdk/client-s3';
import { type AwsSettings, type Env, resolveEndpoint, type SettingNames } from '../config/env.js';
import { SqsJobsError } from '../core/errors.js';
import type { ArchivePage, ArchiveStore } from '../ports/archive.js';
import { type ClientOptions, clientConfig, withoutLogging } from './aws-clients.js';

/**
 * S3's endpoint and region: the option, else AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (the SDK's
 * own order; never the SQS ones); region as for every client. Throws ConfigError naming the source.
 */
export function resolveS3Settings(options: { endpoint?: string | undefined; region?: string | undefined }, env: Env, names: SettingNames) {
  return resolveEndpoint(options, env, names, ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'], 'S3');
}

/**
 * An S3 client with the same settings as createSqsClient's. With an endpoint of its own (LocalStack,
 * moto, a proxy), path-style addressing (`http://host:port/bucket/key`): an emulator on 127.0.0.1
 * has no DNS name for each bucket. Without one, AWS's virtual-hosted style.
 */
export function createS3Client(settings: AwsSettings, options: ClientOptions = {}, env: Env = process.env): S3Client {
  return withoutLogging(new S3Client({ ...clientConfig(settings, options, env), forcePathStyle: settings.endpoint !== undefined }));
}

/** An archive opened on S3: its store, where it is (`url`: `s3://bucket/prefix`), and close(), which destroys its client. */
export interface OpenedS3Archive {
  readonly store: S3Archive;
  readonly bucket: string;
  readonly prefix: string;
  readonly url: string;
  close(): void;
}

/**
 * The archive at `where` (parseArchiveUrl's) on a client of its own, with S3's `settings`
 * (resolveS3Settings': check them before making other clients), written under `kmsKeyId` when
 * given. No call is made yet. How `dlq archive`, `dlq replay --from | --archive` and the
 * dashboard's `archive` open one.
 */
export function openS3Archive(
  where: { readonly bucket: string; readonly prefix: string },
  settings: AwsSettings,
  o: { readonly kmsKeyId?: string | undefined },
  env: Env,
): OpenedS3Archive {
  const client = createS3Client(settings, {}, env);
  const store = new S3Archive(client, { bucket: where.bucket, kmsKeyId: o.kmsKeyId });
  return { store, bucket: where.bucket, prefix: where.prefix, url: `s3://${where.bucket}/${where.prefix}`, close: () => client.destroy() };
}

/** How S3Archive encrypts what it writes. */
export interface S3ArchiveOptions {
  readonly bucket: string;
  /**
   * A KMS key (id, alias or ARN): every object is written with SSE-KMS under it
   * (`ServerSideEncryption: aws:kms`, `SSEKMSKeyId`) and an S3 Bucket Key (`BucketKeyEnabled`:
   * S3 asks KMS for a key per bucket for a while rather than one per object, which cuts the KMS
   * requests, and their cost, by up to 99%). Without it the request names no encryption
   * and the bucket's default applies (SSE-S3, AES-256, on every bucket since January 2023, or the
   * bucket's own default KMS key when it has one).
   */
  readonly kmsKeyId?: string | undefined;
}

/** S3's largest listing page. */
const PAGE = 1_000;

/**
 * The archive port over S3, in one bucket. put is PutObject (the SDK sends a CRC32 checksum S3
 * checks before it answers), list is ListObjectsV2, get is GetObject, check is HeadBucket. S3's
 * errors are answered as SqsJobsErrors naming the bucket and key (s3Failure).
 */
export class S3Archive implements ArchiveStore {
  readonly #s3: S3Client;
  readonly #o: S3ArchiveOptions;

  constructor(s3: S3Client, options: S3ArchiveOptions) {
    this.#s3 = s3;
    this.#o = options;
  }

  /** What put asks of S3 for `key` (exported for the unit test of the encryption settings). */
  putInput(key: string, body: string): PutObjectCommandInput {
    return {
      Bucket: this.#o.bucket,
      Key: key,
      Body: body,
      ContentType: 'application/json',
      ...(this.#o.kmsKeyId === undefined ? {} : { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: this.#o.kmsKeyId, BucketKeyEnabled: true }),
    };
  }

  async check(): Promise<void> {
    await this.#call('reach', '', 's3:ListBucket', () => this.#s3.send(new HeadBucketCommand({ Bucket: this.#o.bucket })));
  }

  async put(key: string, body: string): Promise<void> {
    await this.#call('write', key, 's3:PutObject', () => this.#s3.send(new PutObjectCommand(this.putInput(key, body))));
  }

  async list(
    prefix: string,
    o: { readonly startAfter?: string; readonly next?: string; readonly max?: number } = {},
  ): Promise<ArchivePage> {
    const out = await this.#call('list', prefix, 's3:ListBucket', () =>
      this.#s3.send(
        new ListObjectsV2Command({
          Bucket: this.#o.bucket,
          Prefix: prefix,
          MaxKeys: Math.min(o.max ?? PAGE, PAGE),
          ...(o.next === undefined ? {} : { ContinuationToken: o.next }),
          ...(o.startAfter === undefined || o.next !== undefined ? {} : { StartAfter: o.startAfter }),
        }),
      ),
    );
    return {
      objects: (out.Contents ?? []).flatMap((c) => (c.Key === undefined ? [] : [{ key: c.Key, size: c.Size ?? 0 }])),
      next: out.IsTruncated ? out.NextContinuationToken : undefined,
    };
  }

  async get(key: string): Promise<string | undefined> {
    try {
      const out = await this.#s3.send(new GetObjectCommand({ Bucket: this.#o.bucket, Key: key }));
      return await out.Body?.transformToString('utf8');
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw s3Failure('read', this.#o.bucket, key, 's3:GetObject', error);
    }
  }

  async #call<T>(what: string, key: string, permission: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw s3Failure(what, this.#o.bucket, key, permission, error);
    }
  }
}

/**
 * An S3 error as an SqsJobsError naming `s3://bucket/key` and S3's code: CONFIG_INVALID where the
 * setting is wrong (no such bucket, access denied: `permission`, or KMS's), STORE_UNREACHABLE
 * otherwise (S3 did not answer, or answered 5xx: the run can be made again). Exported for its test.
 */
export function s3Failure(what: string, bucket: string, key: string, permission: string, error: unknown): SqsJobsError {
  const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const code = e.name === undefined || e.name === 'Error' || e.name === 'UnknownError' ? String(status ?? 'error') : e.name;
  const said = `${code}${e.message && e.message !== code && e.message !== 'UnknownError' ? `: ${e.message}` : ''}`;
  const failed = `could not ${what} s3://${bucket}/${key}`;
  const options = { cause: error };
  if (status === 404 || e.name === 'NoSuchBucket' || e.name === 'NotFound')
    return new SqsJobsError('CONFIG_INVALID', `${failed}: no bucket named ${bucket} (${said}); create it, or fix the s3:// URL`, options);
  if (status === 403 || /AccessDenied|Forbidden|KMS/.test(code)) {
    const kms = 'and with a KMS key kms:GenerateDataKey (writes) or kms:Decrypt (reads) on it';
    return new SqsJobsError('CONFIG_INVALID', `${failed}: access denied (${said}); this role needs ${permission} there, ${kms}`, options);
  }
  return new SqsJobsError('STORE_UNREACHABLE', `${failed}: ${said}; nothing was lost, run it again`, options);
}
