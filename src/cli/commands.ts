import { createSqsClient } from '../adapters/aws-clients.js';
import { parseConfig, resolveAwsSettings, resolveMemcached, resolveQueueUrl, type AwsSettings, type Env } from '../config/env.js';
import { prioritySchema } from '../core/priority.js';
import { ConfigError, SqsJobsError } from '../core/errors.js';
import { createProducer } from '../producer/producer.js';
import { createQueues } from '../ops/wiring.js';
import { createWorker, type Worker } from '../worker/worker.js';
import { loadJobs } from './load-jobs.js';
import { renderQueueChanges } from './render.js';

export interface CliContext {
  readonly out: (line: string) => void;
  readonly env: Env;
  /** Aborted by Ctrl-C: ends a watch, stops a replay between batches. */
  readonly signal: AbortSignal;
  /** The exit code of a command that ends without an error but says no (`local status` when something is down). */
  readonly status?: { code: number };
}

/** A command line that cannot mean what was asked (a missing confirmation): exit 2, named with its command, like commander's own. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface AwsFlags {
  readonly endpoint?: string | undefined;
  readonly region?: string | undefined;
}

/** A flag that holds JSON, parsed, or a ConfigError naming the flag. */
export function jsonFlag(value: string, flag: string): unknown {
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new ConfigError(`${flag} is not JSON: ${(error as Error).message}`);
  }
}

/** A whole-number flag, or a ConfigError naming the flag, the rule and the value. */
export function integer(value: string | undefined, flag: string, min = Number.NEGATIVE_INFINITY): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n)) throw new ConfigError(`${flag}: must be a whole number (got ${JSON.stringify(value)})`);
  if (n < min) throw new ConfigError(`${flag}: must be a whole number >= ${min} (got ${JSON.stringify(value)})`);
  return n;
}

/** SQS endpoint and region from --endpoint/--region, else the environment; errors name the flag. */
export function sqsSettings(flags: AwsFlags, env: Env): AwsSettings {
  return resolveAwsSettings({ endpoint: flags.endpoint, region: flags.region }, env, { endpoint: '--endpoint', region: '--region' });
}

/**
 * Errors from createWorker name its options (`options.concurrency`); on the command line the
 * user typed flags, so name those instead.
 */
function inFlagTerms<T>(flags: Readonly<Record<string, string>>, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (!(error instanceof SqsJobsError) || error.code !== 'CONFIG_INVALID') throw error;
    const message = Object.entries(flags).reduce((m, [option, flag]) => m.replaceAll(`options.${option}`, flag), error.message);
    throw new ConfigError(message, { cause: error });
  }
}

interface QueuesCreateFlags extends AwsFlags {
  readonly name?: string;
  readonly maxReceiveCount?: string;
  readonly visibilityTimeout?: string;
  readonly spillover?: boolean;
  readonly tiers?: boolean;
  readonly json?: boolean;
}

export async function queuesCreate(flags: QueuesCreateFlags, { out, env }: CliContext): Promise<void> {
  if (flags.name === undefined) throw new ConfigError('queues create needs --name <queue name>');
  const maxReceiveCount = integer(flags.maxReceiveCount, '--max-receive-count');
  const visibilityTimeout = integer(flags.visibilityTimeout, '--visibility-timeout');
  const sqs = createSqsClient(sqsSettings(flags, env), {}, env);
  try {
    const pair = await createQueues(sqs, {
      name: flags.name,
      maxReceiveCount,
      visibilityTimeout,
      spillover: flags.spillover === true,
      tiers: flags.tiers === true,
    });
    if (flags.json) out(JSON.stringify(pair));
    else {
      out(`queue: ${pair.queueUrl}`);
      if (pair.spilloverQueueUrl !== undefined)
        out(`spill: ${pair.spilloverQueueUrl}  (tenant fairness: a key's jobs beyond its allowance)`);
      if (pair.lanes !== undefined) {
        out(`high:  ${pair.lanes.high}  (priority tier high; the queue is normal's)`);
        out(`low:   ${pair.lanes.low}  (priority tier low)`);
      }
      out(`dlq:   ${pair.dlqUrl}  (after ${pair.maxReceiveCount} receives)`);
      out(renderQueueChanges(pair.changes));
    }
  } finally {
    sqs.destroy();
  }
}

interface WorkerFlags extends AwsFlags {
  readonly jobs?: string;
  readonly queue?: string[] | undefined;
  readonly concurrency?: string;
  readonly prefetch?: string;
  readonly visibilityTimeout?: string;
  readonly waitTime?: string;
  readonly shutdownTimeoutMs?: string;
  readonly memcached?: string;
  readonly lockFailClosed?: boolean;
  readonly cloudwatchEndpoint?: string;
  readonly table?: string;
  readonly tiers?: boolean | string;
  readonly schedules?: boolean;
}

const WORKER_FLAGS = {
  queues: '--queue',
  endpoint: '--endpoint',
  region: '--region',
  concurrency: '--concurrency',
  prefetch: '--prefetch',
  visibilityTimeoutSeconds: '--visibility-timeout',
  waitTimeSeconds: '--wait-time',
  shutdownTimeoutMs: '--shutdown-timeout-ms',
  'metrics.endpoint': '--cloudwatch-endpoint',
  memcached: '--memcached',
  'store.table': '--table',
  store: '--table',
  'tiers.pick': '--tiers',
  schedules: '--schedules',
};

/** `<url>[@weight]`: the weight is what follows the last @, when that is not part of the URL. */
function queueFlag(value: string, env: Env): string | { url: string; weight: number } {
  const at = /^(.*)@([^@/]*)$/.exec(value);
  const url = resolveQueueUrl(at === null ? value : at[1], env, '--queue');
  if (at === null) return url;
  return { url, weight: integer(at[2], `--queue ${at[1]}@<weight>`, 1)! };
}

export async function worker(flags: WorkerFlags, { env }: CliContext): Promise<void> {
  if (flags.jobs === undefined) throw new ConfigError('worker needs --jobs <module or folder that exports jobs>');
  // Flags and variables with their own rules are checked (and named) before the jobs module is
  // imported; createWorker checks the rest before it opens any connection.
  sqsSettings(flags, env);
  resolveMemcached(flags.memcached, env, '--memcached');
  const queues = flags.queue?.map((q) => queueFlag(q, env));
  const options = {
    queues,
    endpoint: flags.endpoint,
    region: flags.region,
    concurrency: integer(flags.concurrency, '--concurrency'),
    prefetch: integer(flags.prefetch, '--prefetch'),
    visibilityTimeoutSeconds: integer(flags.visibilityTimeout, '--visibility-timeout'),
    waitTimeSeconds: integer(flags.waitTime, '--wait-time'),
    shutdownTimeoutMs: integer(flags.shutdownTimeoutMs, '--shutdown-timeout-ms'),
    memcached: flags.memcached,
    lockFailClosed: flags.lockFailClosed,
    metrics: { ...(flags.cloudwatchEndpoint === undefined ? {} : { endpoint: flags.cloudwatchEndpoint }) },
    ...(flags.table === undefined ? {} : { store: { table: flags.table } }),
    ...(flags.tiers === undefined ? {} : { tiers: flags.tiers === true ? true : { pick: flags.tiers as 'strict' } }),
    schedules: flags.schedules === true,
    handleSignals: true,
  };
  const jobs = await loadJobs(flags.jobs);
  const w: Worker = inFlagTerms(WORKER_FLAGS, () => createWorker({ ...options, jobs }, env));
  await w.start();
  await new Promise<void>((resolve) => w.once('stopped', resolve));
}

interface EnqueueFlags extends AwsFlags {
  readonly jobs?: string;
  readonly queue?: string;
  readonly args: string;
  readonly jobId?: string;
  readonly tenant?: string;
  readonly delay?: string;
  readonly track?: boolean;
  readonly table?: string;
  readonly priority?: string;
}

export async function enqueueCommand(name: string, flags: EnqueueFlags, { out, env }: CliContext): Promise<void> {
  if (flags.jobs === undefined) throw new ConfigError('enqueue needs --jobs <module that exports the job>');
  const args = jsonFlag(flags.args, '--args');
  const delaySeconds = integer(flags.delay, '--delay');
  const priority =
    flags.priority === undefined ? {} : { priority: parseConfig(prioritySchema, flags.priority, '--priority', 'invalid enqueue flags') };
  const aws = sqsSettings(flags, env);
  const queueUrl = resolveQueueUrl(flags.queue, env, '--queue');
  const store = flags.table === undefined ? {} : { store: { table: flags.table } };
  const producer = createProducer(
    {
      jobs: await loadJobs(flags.jobs),
      queueUrl,
      endpoint: aws.endpoint,
      region: aws.region,
      tiers: flags.priority !== undefined,
      ...store,
    },
    env,
  );
  try {
    const track = flags.track ? { track: true } : {};
    const result = await producer.enqueue(name, args, { jobId: flags.jobId, tenant: flags.tenant, delaySeconds, ...track, ...priority });
    out(JSON.stringify(result));
  } finally {
    producer.close();
  }
}
