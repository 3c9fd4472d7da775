import { z } from 'zod';
import { ConfigError } from './errors.js';
import { parseWith } from './validation.js';

/**
 * Where sqs-jobs finds AWS and memcached. Every field can come from options or the environment;
 * options win. The same variables point the code at AWS, LocalStack or moto.
 *
 * | option        | environment                                               |
 * |---------------|-----------------------------------------------------------|
 * | queueUrl      | SQS_JOBS_QUEUE_URL                                        |
 * | endpoint      | SQS_JOBS_ENDPOINT, else AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL |
 * | region        | AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1       |
 * | memcached     | SQS_JOBS_MEMCACHED (host:port[,host:port])                |
 */
export type Env = Readonly<Record<string, string | undefined>>;

const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      } catch {
        return false;
      }
    }, `must be an http(s) URL, e.g. ${what}`);

export const endpointSchema = httpUrl('http://127.0.0.1:4566');

export const queueUrlSchema = httpUrl('https://sqs.us-east-1.amazonaws.com/123456789012/jobs').refine(
  (value) => /^\/[^/]+\/[A-Za-z0-9_-]{1,80}(\.fifo)?\/?$/.test(new URL(value).pathname),
  'must end in /<account id>/<queue name>, as CreateQueue or GetQueueUrl return it',
);

export const regionSchema = z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region such as us-east-1');

export const memcachedSchema = z
  .string()
  .regex(/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/, 'must be host:port, or several joined by commas');

export interface AwsSettings {
  readonly endpoint: string | undefined;
  readonly region: string;
}

function configError(subject: string) {
  return (issues: { field: string; rule: string }[]) =>
    new ConfigError(`${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
}

/** Resolve endpoint and region from options, then the environment. Throws ConfigError naming the source. */
export function resolveAwsSettings(options: { endpoint?: string | undefined; region?: string | undefined }, env: Env = process.env): AwsSettings {
  const endpointFrom = options.endpoint !== undefined
    ? ['endpoint', options.endpoint]
    : ([['SQS_JOBS_ENDPOINT', env.SQS_JOBS_ENDPOINT], ['AWS_ENDPOINT_URL_SQS', env.AWS_ENDPOINT_URL_SQS], ['AWS_ENDPOINT_URL', env.AWS_ENDPOINT_URL]] as const).find(
        ([, v]) => v !== undefined && v !== '',
      );
  const regionFrom = options.region !== undefined
    ? ['region', options.region]
    : ([['AWS_REGION', env.AWS_REGION], ['AWS_DEFAULT_REGION', env.AWS_DEFAULT_REGION]] as const).find(([, v]) => v !== undefined && v !== '');
  const endpoint = endpointFrom === undefined ? undefined : parseWith(endpointSchema, endpointFrom[1], endpointFrom[0], configError('invalid AWS endpoint'));
  const region = regionFrom === undefined ? 'us-east-1' : parseWith(regionSchema, regionFrom[1], regionFrom[0], configError('invalid AWS region'));
  return Object.freeze({ endpoint, region });
}

/** The queue URL from options or SQS_JOBS_QUEUE_URL; a clear ConfigError when it is missing or malformed. */
export function resolveQueueUrl(queueUrl: string | undefined, env: Env = process.env): string {
  const [source, value] = queueUrl !== undefined ? ['queueUrl', queueUrl] : ['SQS_JOBS_QUEUE_URL', env.SQS_JOBS_QUEUE_URL];
  if (value === undefined || value === '') {
    throw new ConfigError(
      'no queue URL: pass queueUrl, or set SQS_JOBS_QUEUE_URL (create a queue with `sqs-jobs queues create --name <queue>`, which prints it)',
    );
  }
  return parseWith(queueUrlSchema, value, source, configError('invalid queue URL'));
}

/** memcached servers from options or SQS_JOBS_MEMCACHED; undefined when neither is set. */
export function resolveMemcached(servers: string | undefined, env: Env = process.env): string | undefined {
  const [source, value] = servers !== undefined ? ['memcached', servers] : ['SQS_JOBS_MEMCACHED', env.SQS_JOBS_MEMCACHED];
  if (value === undefined || value === '') return undefined;
  return parseWith(memcachedSchema, value, source, configError('invalid memcached address'));
}

export function isFifoQueue(queueUrl: string): boolean {
  return queueUrl.replace(/\/$/, '').endsWith('.fifo');
}

export function queueNameOf(queueUrl: string): string {
  return new URL(queueUrl).pathname.split('/').filter(Boolean).pop() ?? queueUrl;
}
