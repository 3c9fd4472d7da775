import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { firstSet, parseConfig } from './parse.js';
import { httpUrlProblem, REGION, queueUrlSchema } from '../core/queue-url.js';

export { firstSet, implementing, parseConfig } from './parse.js';
export {
  isFifoQueue,
  parseQueueUrl,
  QUEUE_URL_EXAMPLE,
  queueAccountOf,
  queueNameOf,
  queueRegionOf,
  queueUrlSchema,
  type QueueUrlParts,
} from '../core/queue-url.js';

/**
 * Where sqs-jobs finds AWS and memcached. Every field can come from options or the environment;
 * options win. The same variables point the code at AWS, LocalStack, ElasticMQ or moto.
 *
 * | option             | environment                                                          |
 * |--------------------|----------------------------------------------------------------------|
 * | queueUrl           | SQS_JOBS_QUEUE_URL                                                   |
 * | endpoint (SQS)     | SQS_JOBS_ENDPOINT, else AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL  |
 * | metrics.endpoint   | AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL (never the SQS ones) |
 * | region             | AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1                  |
 * | memcached          | SQS_JOBS_MEMCACHED ([tls://]host:port[,host:port])                   |
 * | (memcached TLS)    | SQS_JOBS_MEMCACHED_CA (a PEM file), SQS_JOBS_MEMCACHED_SERVERNAME    |
 * | (logger)           | SQS_JOBS_LOG_LEVEL                                                   |
 */
export type Env = Readonly<Record<string, string | undefined>>;

const httpUrl = (example: string) =>
  z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      const problem = httpUrlProblem(value, example);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });

export const endpointSchema = httpUrl('http://127.0.0.1:4566');

const regionSchema = z.string().trim().regex(REGION, 'must be an AWS region such as us-east-1');

/** The scheme that puts every server of a memcached list on TLS. */
const MEMCACHED_TLS = 'tls://';

const memcachedSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const list = value.startsWith(MEMCACHED_TLS) ? value.slice(MEMCACHED_TLS.length) : value;
    if (list.includes('://')) {
      ctx.addIssue({ code: 'custom', message: 'may start with tls:// (once, for every server of the list), no other scheme' });
    } else if (!/^[^\s,:/]+:\d{1,5}(,[^\s,:/]+:\d{1,5})*$/.test(list)) {
      ctx.addIssue({ code: 'custom', message: 'must be host:port, or several joined by commas, after tls:// for TLS' });
    } else if (list.split(',').some((server) => !(Number(server.split(':')[1]) >= 1 && Number(server.split(':')[1]) <= 65_535))) {
      ctx.addIssue({ code: 'custom', message: 'must have ports 1-65535' });
    }
  });

/** The name a memcached's TLS certificate must hold, when it is not the host connected to (SNI takes no IP address). */
const memcachedServernameSchema = z
  .string()
  .trim()
  .regex(/^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, {
    message: 'must be a DNS name the certificate holds, e.g. memcached.internal',
  })
  .refine((name) => !/^[\d.]+$/.test(name), 'must be a DNS name, not an IP address (the certificate is checked for the IP connected to)');

/** MemcachedLock's `tls` option: the CA's PEM (default: Node's own CAs) and the name the certificates hold (default: the host). */
export const memcachedTlsOptionSchema = z
  .object({ ca: z.union([z.string().min(1), z.instanceof(Buffer)]).optional(), servername: memcachedServernameSchema.optional() })
  .strict();

export const metricsNamespaceSchema = z
  .string()
  .regex(/^[A-Za-z0-9.\-_/#:]{1,255}$/, 'must be 1-255 of letters, digits and . - _ / # :')
  .refine((n) => !n.startsWith('AWS/'), 'must not start with AWS/ (reserved for AWS services)');

/** A DynamoDB table name, as the job store's `--table` / SQS_JOBS_JOB_TABLE must be. */
export const jobTableSchema = z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name: 3-255 letters, digits, _ - .');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const logLevelSchema = z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` });

export interface AwsSettings {
  readonly endpoint: string | undefined;
  readonly region: string;
}

/** The dedupe lock's key prefix in memcached: workers, and whoever cancels jobs, must agree on it. */
export const lockKeyPrefixSchema = z
  .string()
  .regex(/^[\x21-\x7e]{0,64}$/, 'must be printable ASCII without spaces, at most 64 characters')
  .default('sqsjobs:');

function resolveRegion(region: unknown, env: Env, name = 'region'): string {
  const from: [string, unknown] | undefined = region !== undefined ? [name, region] : firstSet(env, ['AWS_REGION', 'AWS_DEFAULT_REGION']);
  return from === undefined ? 'us-east-1' : parseConfig(regionSchema, from[1], from[0], 'invalid AWS region');
}

export type SettingsOptions = { endpoint?: string | undefined; region?: string | undefined };
export type SettingNames = { endpoint: string; region: string };
export const DEFAULT_NAMES: SettingNames = { endpoint: 'endpoint', region: 'region' };

/** Endpoint from the option, else the first of `envVars` that is set; region likewise. */
export function resolveEndpoint(options: SettingsOptions, env: Env, names: SettingNames, envVars: string[], what: string): AwsSettings {
  const from: [string, unknown] | undefined = options.endpoint !== undefined ? [names.endpoint, options.endpoint] : firstSet(env, envVars);
  const endpoint = from === undefined ? undefined : parseConfig(endpointSchema, from[1], from[0], `invalid ${what} endpoint`);
  return Object.freeze({ endpoint, region: resolveRegion(options.region, env, names.region) });
}

/**
 * SQS endpoint and region from options, then the environment: SQS_JOBS_ENDPOINT, else
 * AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL. Throws ConfigError naming the source.
 */
export function resolveAwsSettings(options: SettingsOptions, env: Env = process.env, names: SettingNames = DEFAULT_NAMES): AwsSettings {
  return resolveEndpoint(options, env, names, ['SQS_JOBS_ENDPOINT', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL'], 'SQS');
}

/**
 * CloudWatch endpoint and region: the option, else AWS_ENDPOINT_URL_CLOUDWATCH, else
 * AWS_ENDPOINT_URL (the SDK's own order). Never SQS_JOBS_ENDPOINT or AWS_ENDPOINT_URL_SQS: with
 * SQS on ElasticMQ and CloudWatch on moto, metrics must go to moto.
 */
export function resolveCloudWatchSettings(
  options: SettingsOptions,
  env: Env = process.env,
  names: SettingNames = DEFAULT_NAMES,
): AwsSettings {
  return resolveEndpoint(options, env, names, ['AWS_ENDPOINT_URL_CLOUDWATCH', 'AWS_ENDPOINT_URL'], 'CloudWatch');
}

/** The job store's DynamoDB endpoint: the option, else AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL (the SDK's own order). */
export function resolveDynamoSettings(options: SettingsOptions, env: Env = process.env, names: SettingNames = DEFAULT_NAMES): AwsSettings {
  return resolveEndpoint(options, env, names, ['AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL'], 'DynamoDB');
}

/**
 * The queue URL from the option (named `source` in errors) or SQS_JOBS_QUEUE_URL; a clear
 * ConfigError when it is missing or malformed.
 */
export function resolveQueueUrl(queueUrl: string | undefined, env: Env = process.env, source = 'queueUrl'): string {
  const [from, value] = queueUrl !== undefined ? [source, queueUrl] : ['SQS_JOBS_QUEUE_URL', env.SQS_JOBS_QUEUE_URL];
  if (value === undefined || value === '') {
    throw new ConfigError(
      'no queue URL: pass queueUrl, or set SQS_JOBS_QUEUE_URL (create a queue with `sqs-jobs queues create --name <queue>`, which prints it)',
    );
  }
  return parseConfig(queueUrlSchema, value, from, 'invalid queue URL');
}

/** memcached servers from options or SQS_JOBS_MEMCACHED (the list only); undefined when neither is set. */
export function resolveMemcached(servers: string | undefined, env: Env = process.env, name = 'memcached'): string | undefined {
  const [source, value] = servers !== undefined ? [name, servers] : ['SQS_JOBS_MEMCACHED', env.SQS_JOBS_MEMCACHED];
  if (value === undefined || value === '') return undefined;
  return parseConfig(memcachedSchema, value, source, 'invalid memcached address');
}

/** Where memcached is, and how a `tls://` list is verified: what every MemcachedLock made from the settings is given. */
export interface MemcachedSettings {
  /** `[tls://]host:port[,host:port]` */
  readonly servers: string;
  /** With `tls://`: the CA's PEM (none: Node's own CAs) and the name the certificates hold (none: each host). */
  readonly tls?: { readonly ca?: Buffer; readonly servername?: string };
}

/**
 * memcached's servers (the option, named `name`, or SQS_JOBS_MEMCACHED) and, for a `tls://` list,
 * SQS_JOBS_MEMCACHED_CA (a PEM file, read here, once) and SQS_JOBS_MEMCACHED_SERVERNAME; undefined
 * when no memcached is named. Either TLS variable beside a plain list is a ConfigError: the
 * connection would not be what they say.
 */
export function resolveMemcachedSettings(
  servers: string | undefined,
  env: Env = process.env,
  name = 'memcached',
): MemcachedSettings | undefined {
  const list = resolveMemcached(servers, env, name);
  if (list === undefined) return undefined;
  const ca = firstSet(env, ['SQS_JOBS_MEMCACHED_CA']);
  const servername = firstSet(env, ['SQS_JOBS_MEMCACHED_SERVERNAME']);
  if (!list.startsWith(MEMCACHED_TLS)) {
    const set = [ca, servername].flatMap((v) => (v === undefined ? [] : [v[0]]));
    if (set.length === 0) return Object.freeze({ servers: list });
    throw new ConfigError(
      `invalid memcached TLS settings: ${set.join(' and ')} set, but the memcached servers are plain host:port (${list}): write them as ${MEMCACHED_TLS}${list} for TLS, or unset ${set.join(' and ')}`,
    );
  }
  const tls = {
    ...(ca === undefined ? {} : { ca: readPemCertificate(ca[1], ca[0]) }),
    ...(servername === undefined
      ? {}
      : { servername: parseConfig(memcachedServernameSchema, servername[1], servername[0], 'invalid memcached TLS settings') }),
  };
  return Object.freeze({ servers: list, tls: Object.freeze(tls) });
}

/** The PEM file at `path` (named by `variable`), checked to hold a certificate. */
function readPemCertificate(path: string, variable: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new ConfigError(`invalid memcached TLS settings: ${variable}: cannot read ${path} (${why}): it must name a PEM file of the CA`, {
      cause: error,
    });
  }
  try {
    new X509Certificate(pem);
  } catch (error) {
    throw new ConfigError(`invalid memcached TLS settings: ${variable}: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`, {
      cause: error,
    });
  }
  return pem;
}

/** SQS_JOBS_LOG_LEVEL checked before pino sees it (pino throws a bare Error on an unknown level). */
export function resolveLogLevel(env: Env = process.env): (typeof LOG_LEVELS)[number] {
  const value = env.SQS_JOBS_LOG_LEVEL;
  if (value === undefined || value === '') return 'info';
  return parseConfig(logLevelSchema, value, 'SQS_JOBS_LOG_LEVEL', 'invalid log level');
}

/** The metrics namespace from the option (named `source`) or SQS_JOBS_METRICS_NAMESPACE, else SqsJobs. */
export function resolveMetricsNamespace(namespace: string | undefined, env: Env = process.env, source = 'metrics.namespace'): string {
  const from: [string, unknown] | undefined = namespace !== undefined ? [source, namespace] : firstSet(env, ['SQS_JOBS_METRICS_NAMESPACE']);
  return from === undefined ? 'SqsJobs' : parseConfig(metricsNamespaceSchema, from[1], from[0], 'invalid metrics namespace');
}
