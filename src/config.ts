import { z } from 'zod';
import { ConfigError, type FieldIssue } from './errors.js';

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
 * | memcached          | SQS_JOBS_MEMCACHED (host:port[,host:port])                           |
 * | (logger)           | SQS_JOBS_LOG_LEVEL                                                   |
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** Why `value` is not an http(s) URL with a host, or undefined when it is one. Never throws. */
function httpUrlProblem(value: string, example: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an http(s) URL, e.g. ${example}`;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return `must be an http(s) URL, e.g. ${example}`;
  return undefined;
}

const httpUrl = (example: string) =>
  z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      const problem = httpUrlProblem(value, example);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });

export const endpointSchema = httpUrl('http://127.0.0.1:4566');

/** What a queue URL says about its queue. */
export interface QueueUrlParts {
  readonly name: string;
  readonly account: string;
  /** From the host (AWS, LocalStack's dynamic strategy) or the path (its path strategy); undefined when the URL does not say. */
  readonly region: string | undefined;
  readonly fifo: boolean;
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const ACCOUNT = /^[A-Za-z0-9_-]{1,64}$/;
/** SQS queue names: 1-80 characters, letters, digits, - and _; a FIFO queue's ends in .fifo (counted). */
const QUEUE_NAME = /^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$/;
/**
 * Hosts that carry the region: sqs.<region>.amazonaws.com[.cn], sqs.<region>.api.aws, LocalStack's
 * dynamic/standard sqs.<region>.localhost.localstack.cloud; the legacy <region>.queue.amazonaws.com
 * and LocalStack's domain strategy <region>.queue.localhost.localstack.cloud.
 */
const REGION_HOSTS = [/^sqs\.([a-z0-9-]+)\./, /^([a-z0-9-]+)\.queue\./];

export const QUEUE_URL_EXAMPLE = 'https://sqs.us-east-1.amazonaws.com/123456789012/jobs';
const QUEUE_URL_RULE =
  'must end in /<account id>/<queue name> (AWS, moto, ElasticMQ, LocalStack), or be /queue/<region>/<account id>/<queue name> (LocalStack path strategy), as CreateQueue or GetQueueUrl return it';

/**
 * Split a queue URL into name, account and region, or say which rule it breaks. Accepts every form
 * AWS and the emulators return:
 * - AWS, moto: `https://sqs.<region>.amazonaws.com/<account>/<name>` (also the legacy `<region>.queue.amazonaws.com`)
 * - LocalStack `SQS_ENDPOINT_STRATEGY=off`, ElasticMQ, moto on loopback: `http://host:port/<account>/<name>`
 * - LocalStack `path`: `http://host:port/queue/<region>/<account>/<name>`
 * - LocalStack `dynamic` (its default): `http://sqs.<region>.localhost.localstack.cloud:port/<account>/<name>`
 */
export function parseQueueUrl(value: string): { ok: true; parts: QueueUrlParts } | { ok: false; rule: string } {
  const notUrl = httpUrlProblem(value, QUEUE_URL_EXAMPLE);
  if (notUrl !== undefined) return { ok: false, rule: notUrl.replace('must be an http(s) URL', 'must be an http(s) queue URL') };
  const url = new URL(value);
  if (url.search !== '' || url.hash !== '') return { ok: false, rule: 'must have no query string or fragment' };
  const segments = url.pathname.replace(/\/$/, '').split('/').slice(1);
  let region: string | undefined;
  let account: string | undefined;
  let name: string | undefined;
  if (segments.length === 2) [account, name] = segments;
  else if (segments.length === 4 && segments[0] === 'queue') [, region, account, name] = segments;
  if (account === undefined || name === undefined) return { ok: false, rule: QUEUE_URL_RULE };
  if (region !== undefined && !REGION.test(region))
    return { ok: false, rule: `has "${region}" where the path strategy puts a region such as us-east-1` };
  if (!ACCOUNT.test(account))
    return { ok: false, rule: `has "${account}" where the account id goes (letters and digits, e.g. 123456789012)` };
  if (!QUEUE_NAME.test(name)) {
    return { ok: false, rule: `ends in "${name}", which is not a queue name (1-80 letters, digits, - and _; FIFO names end in .fifo)` };
  }
  region ??= REGION_HOSTS.map((pattern) => pattern.exec(url.hostname)?.[1]).find((r) => r !== undefined && REGION.test(r));
  return { ok: true, parts: Object.freeze({ name, account, region, fifo: name.endsWith('.fifo') }) };
}

export const queueUrlSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const parsed = parseQueueUrl(value);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.rule });
  });

export const regionSchema = z.string().trim().regex(REGION, 'must be an AWS region such as us-east-1');

export const memcachedSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    if (!/^[^\s,:]+:\d{1,5}(,[^\s,:]+:\d{1,5})*$/.test(value))
      ctx.addIssue({ code: 'custom', message: 'must be host:port, or several joined by commas' });
    else if (value.split(',').some((server) => !(Number(server.split(':')[1]) >= 1 && Number(server.split(':')[1]) <= 65_535))) {
      ctx.addIssue({ code: 'custom', message: 'must have ports 1-65535' });
    }
  });

export const metricsNamespaceSchema = z
  .string()
  .regex(/^[A-Za-z0-9.\-_/#:]{1,255}$/, 'must be 1-255 of letters, digits and . - _ / # :')
  .refine((n) => !n.startsWith('AWS/'), 'must not start with AWS/ (reserved for AWS services)');

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const logLevelSchema = z.enum(LOG_LEVELS, { message: `must be one of ${LOG_LEVELS.join(', ')}` });

export interface AwsSettings {
  readonly endpoint: string | undefined;
  readonly region: string;
}

/** Shown after a rule: the value that broke it, short, with any user:password@ hidden. */
function shown(value: unknown): string {
  if (typeof value === 'string') {
    const text = value.replace(/[^\s/,@]*@/g, '***@');
    return ` (got ${JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text)})`;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null)
    return ` (got ${String(value)})`;
  return '';
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

type Issue = z.core.$ZodIssue;

/**
 * "field: rule (got value)" for every issue. A union that failed is read through the branch that
 * got past the type check (so `queues[0].weight` is named, not "Invalid input"); when no branch
 * did, its own message, or the branches' type rules joined with "or".
 */
function issuesOf(issues: readonly Issue[], root: string, input: unknown, prefix: readonly PropertyKey[] = []): FieldIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const typeOnly = (branch: readonly Issue[]) =>
        branch.every((i) => i.path.length === 0 && ['invalid_type', 'invalid_value', 'custom'].includes(i.code));
      const deeper = issue.errors.find((branch) => !typeOnly(branch));
      if (deeper !== undefined) return issuesOf(deeper, root, input, path);
      const rule = issue.message !== 'Invalid input' ? issue.message : issue.errors.flatMap((b) => b.map((i) => i.message)).join(', or ');
      return [{ field: fieldName(root, path), rule: `${rule}${shown(at(input, path))}` }];
    }
    return [{ field: fieldName(root, path), rule: `${issue.message}${issue.code === 'unrecognized_keys' ? '' : shown(at(input, path))}` }];
  });
}

function fieldName(root: string, path: readonly PropertyKey[]): string {
  return `${root}${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`.replace(/^\./, '');
}

/**
 * Parse a setting or a whole options object with `schema`; on failure throw a ConfigError
 * (CONFIG_INVALID) that names every field and its rule, with the value it got: never a zod or
 * URL TypeError.
 */
export function parseConfig<S extends z.ZodType>(schema: S, value: unknown, root: string, subject: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = issuesOf(result.error.issues, root, value);
  throw new ConfigError(`${subject}: ${issues.map((i) => `${i.field}: ${i.rule}`).join('; ')}`);
}

function firstSet(env: Env, names: readonly string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return [name, value];
  }
  return undefined;
}

function resolveRegion(region: unknown, env: Env, name = 'region'): string {
  const from: [string, unknown] | undefined = region !== undefined ? [name, region] : firstSet(env, ['AWS_REGION', 'AWS_DEFAULT_REGION']);
  return from === undefined ? 'us-east-1' : parseConfig(regionSchema, from[1], from[0], 'invalid AWS region');
}

type SettingsOptions = { endpoint?: string | undefined; region?: string | undefined };
type SettingNames = { endpoint: string; region: string };
const DEFAULT_NAMES: SettingNames = { endpoint: 'endpoint', region: 'region' };

/** Endpoint from the option, else the first of `envVars` that is set; region likewise. */
function resolveEndpoint(options: SettingsOptions, env: Env, names: SettingNames, envVars: string[], what: string): AwsSettings {
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

/** memcached servers from options or SQS_JOBS_MEMCACHED; undefined when neither is set. */
export function resolveMemcached(servers: string | undefined, env: Env = process.env, name = 'memcached'): string | undefined {
  const [source, value] = servers !== undefined ? [name, servers] : ['SQS_JOBS_MEMCACHED', env.SQS_JOBS_MEMCACHED];
  if (value === undefined || value === '') return undefined;
  return parseConfig(memcachedSchema, value, source, 'invalid memcached address');
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

function partsOf(queueUrl: string): QueueUrlParts | undefined {
  const parsed = parseQueueUrl(queueUrl);
  return parsed.ok ? parsed.parts : undefined;
}

export function isFifoQueue(queueUrl: string): boolean {
  return partsOf(queueUrl)?.fifo ?? queueUrl.replace(/\/$/, '').endsWith('.fifo');
}

/** The queue's name, from any URL form; the last path segment (or the input) for anything else. */
export function queueNameOf(queueUrl: string): string {
  const parts = partsOf(queueUrl);
  if (parts !== undefined) return parts.name;
  return (
    queueUrl
      .replace(/[?#].*$/, '')
      .split('/')
      .filter(Boolean)
      .pop() ?? queueUrl
  );
}

/** The account id in a queue URL, or undefined when it is not a queue URL. */
export function queueAccountOf(queueUrl: string): string | undefined {
  return partsOf(queueUrl)?.account;
}

/** The region a queue URL names (AWS hosts, LocalStack's path and dynamic forms), else undefined. */
export function queueRegionOf(queueUrl: string): string | undefined {
  return partsOf(queueUrl)?.region;
}
