import { z } from 'zod';
import {
  parseConfig,
  resolveAwsSettings,
  resolveCloudWatchSettings,
  resolveLogLevel,
  resolveMemcachedSettings,
  resolveMetricsNamespace,
  resolveQueueUrl,
  type AwsSettings,
  type Env,
  type MemcachedSettings,
} from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import { JobRegistry } from '../core/job-registry.js';
import type { MetricsSettings } from '../metrics/settings.js';
import { type WorkerOptions, tiersSchema, workerOptionsSchema } from './options.js';
import { laneUrlFor, type Priority, rankOf } from '../core/priority.js';

/* The worker's options resolved once, where they enter (options.ts holds what may be given). */

/**
 * How lanes of different tiers share the worker. `strict`: the highest tier with work goes first,
 * but a lower tier with work waiting is given a turn once it has been passed over `1/minShare - 1`
 * times in a row, so it keeps at least `minShare` of the turns. `weighted`: every lane by its weight
 * (the tiers' weights already folded in), whatever its tier.
 */
export type TierPick = { readonly mode: 'strict'; readonly minShare: number } | { readonly mode: 'weighted' };

export interface QueueConfig {
  readonly url: string;
  /** Its share among lanes of its tier (and, when tiers are picked by weight, its tier's weight times this). */
  readonly weight: number;
  readonly priority: Priority;
  readonly deadLetterQueueUrl: string | undefined;
}

export type WorkerConfig = Readonly<
  Omit<
    z.output<typeof workerOptionsSchema>,
    'queues' | 'jobs' | 'heartbeatIntervalMs' | 'memcached' | 'metrics' | 'maxHeldBatchItems' | 'fairness' | 'tiers'
  > & {
    /** How lanes of different tiers share the worker. */
    pick: TierPick;
    maxHeldBatchItems: number;
    metrics: MetricsSettings;
    queues: readonly QueueConfig[];
    jobs: JobRegistry;
    heartbeatIntervalMs: number;
    /** The servers, and their TLS settings (SQS_JOBS_MEMCACHED_CA, SQS_JOBS_MEMCACHED_SERVERNAME): read once, here. */
    memcached: MemcachedSettings | undefined;
    aws: AwsSettings;
    /** How long a dedupe lock lives without a heartbeat: a little over one visibility timeout. */
    lockTtlSeconds: number;
  }
>;

/** Validate worker options once, where they enter; out comes a frozen, fully resolved config. */
export function resolveWorkerConfig(options: WorkerOptions, env: Env = process.env): WorkerConfig {
  const o = parseConfig(workerOptionsSchema, options, 'options', 'invalid worker options');
  if (o.logger === undefined) resolveLogLevel(env);
  const { queues, pick } = resolveQueues(o.queues ?? [resolveQueueUrl(undefined, env)], o.tiers);
  const jobs = o.jobs instanceof JobRegistry ? o.jobs : new JobRegistry(o.jobs);
  if (jobs.size === 0) throw new ConfigError('invalid worker options: options.jobs: must register at least one job');
  const aws = resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, {
    endpoint: 'options.endpoint',
    region: 'options.region',
  });
  return Object.freeze({
    ...o,
    queues: Object.freeze(queues),
    pick,
    jobs,
    heartbeatIntervalMs: o.heartbeatIntervalMs ?? Math.floor((o.visibilityTimeoutSeconds * 1000) / 2),
    memcached: o.lock === undefined ? resolveMemcachedSettings(o.memcached, env, 'options.memcached') : undefined,
    aws,
    lockTtlSeconds: o.visibilityTimeoutSeconds + 5,
    maxHeldBatchItems: o.maxHeldBatchItems ?? defaultHeldBatchItems(jobs),
    metrics: resolveMetrics(o.metrics, aws, env),
  });
}

type Options = z.output<typeof workerOptionsSchema>;

const DEFAULT_TIERS = tiersSchema.parse({});

/**
 * The queues as lanes. With `tiers`, the first queue's `-high` and `-low` lanes join it (unless a
 * lane is named already); when tiers are picked by weight, a lane's weight is its tier's times its own.
 */
function resolveQueues(given: NonNullable<Options['queues']>, tiers: Options['tiers']): { queues: QueueConfig[]; pick: TierPick } {
  const listed: QueueConfig[] = given.map((q) =>
    typeof q === 'string'
      ? { url: q, weight: 1, priority: 'normal', deadLetterQueueUrl: undefined }
      : { url: q.url, weight: q.weight, priority: q.priority, deadLetterQueueUrl: q.deadLetterQueueUrl },
  );
  const t = tiers === true ? DEFAULT_TIERS : tiers === false ? undefined : tiers;
  if (t === undefined) return { queues: listed, pick: { mode: 'strict', minShare: DEFAULT_TIERS.minShare } };
  const lanes: QueueConfig[] = listed.some((q) => q.priority !== 'normal')
    ? []
    : (['high', 'low'] as const).map((priority) => ({
        url: laneUrlFor(listed[0]!.url, priority),
        weight: 1,
        priority,
        deadLetterQueueUrl: listed[0]!.deadLetterQueueUrl,
      }));
  const queues = [...lanes, ...listed].sort((a, b) => rankOf(a.priority) - rankOf(b.priority));
  if (t.pick === 'strict') return { queues, pick: { mode: 'strict', minShare: t.minShare } };
  return { queues: queues.map((q) => ({ ...q, weight: q.weight * t.weights[q.priority] })), pick: { mode: 'weighted' } };
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
