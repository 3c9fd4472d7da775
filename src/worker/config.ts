import { z } from 'zod';
import {
  parseConfig,
  resolveAwsSettings,
  resolveCloudWatchSettings,
  resolveLogLevel,
  resolveMemcached,
  resolveMetricsNamespace,
  resolveQueueUrl,
  type AwsSettings,
  type Env,
} from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import { JobRegistry } from '../core/job.js';
import type { MetricsSettings } from '../metrics/settings.js';
import { type WorkerOptions, workerOptionsSchema } from './options.js';

/* The worker's options resolved once, where they enter (options.ts holds what may be given). */

export interface QueueConfig {
  readonly url: string;
  readonly weight: number;
  readonly deadLetterQueueUrl: string | undefined;
}

export type WorkerConfig = Readonly<
  Omit<
    z.output<typeof workerOptionsSchema>,
    'queues' | 'jobs' | 'heartbeatIntervalMs' | 'memcached' | 'metrics' | 'maxHeldBatchItems' | 'fairness'
  > & {
    maxHeldBatchItems: number;
    metrics: MetricsSettings;
    queues: readonly QueueConfig[];
    jobs: JobRegistry;
    heartbeatIntervalMs: number;
    memcached: string | undefined;
    aws: AwsSettings;
    /** How long a dedupe lock lives without a heartbeat: a little over one visibility timeout. */
    lockTtlSeconds: number;
  }
>;

/** Validate worker options once, where they enter; out comes a frozen, fully resolved config. */
export function resolveWorkerConfig(options: WorkerOptions, env: Env = process.env): WorkerConfig {
  const o = parseConfig(workerOptionsSchema, options, 'options', 'invalid worker options');
  if (o.logger === undefined) resolveLogLevel(env);
  const queues = (o.queues ?? [resolveQueueUrl(undefined, env)]).map((q) =>
    typeof q === 'string'
      ? { url: q, weight: 1, deadLetterQueueUrl: undefined }
      : { url: q.url, weight: q.weight, deadLetterQueueUrl: q.deadLetterQueueUrl },
  );
  const jobs = o.jobs instanceof JobRegistry ? o.jobs : new JobRegistry(o.jobs);
  if (jobs.size === 0) throw new ConfigError('invalid worker options: options.jobs: must register at least one job');
  const aws = resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, {
    endpoint: 'options.endpoint',
    region: 'options.region',
  });
  return Object.freeze({
    ...o,
    queues: Object.freeze(queues),
    jobs,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? Math.floor((o.visibilityTimeoutSeconds * 1000) / 2),
    memcached: o.lock === undefined ? resolveMemcached(o.memcached, env, 'options.memcached') : undefined,
    aws,
    lockTtlSeconds: o.visibilityTimeoutSeconds + 5,
    maxHeldBatchItems: o.maxHeldBatchItems ?? defaultHeldBatchItems(jobs),
    metrics: resolveMetrics(o.metrics, aws, env),
  });
}

function defaultHeldBatchItems(jobs: JobRegistry): number {
  const sizes = jobs.names().map((name) => {
    const job = jobs.get(name);
    return job.kind === 'sqs-jobs/batch-job' ? job.maxSize : 0;
  });
  return Math.min(100_000, Math.max(2_000, 2 * Math.max(...sizes)));
}

const metricsEnvSchema = z.enum(['cloudwatch', 'emf', 'off'], { message: 'must be cloudwatch, emf or off' });

function resolveMetrics(m: z.output<typeof workerOptionsSchema>['metrics'], aws: AwsSettings, env: Env): MetricsSettings {
  const sink =
    m.sink ??
    (env.SQS_JOBS_METRICS
      ? parseConfig(metricsEnvSchema, env.SQS_JOBS_METRICS, 'SQS_JOBS_METRICS', 'invalid metrics setting')
      : 'cloudwatch');
  const namespace = resolveMetricsNamespace(m.namespace, env);
  const cloudwatch =
    sink === 'cloudwatch'
      ? resolveCloudWatchSettings({ endpoint: m.endpoint, region: aws.region }, env, {
          endpoint: 'options.metrics.endpoint',
          region: 'options.region',
        })
      : undefined;
  return Object.freeze({ sink, namespace, flushIntervalMs: m.flushIntervalMs, cloudwatch });
}
