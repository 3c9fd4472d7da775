import type { Logger } from 'pino';
import { z } from 'zod';
import { tenantSchema } from '../core/envelope.js';
import { endpointSchema, implementing, metricsNamespaceSchema, queueUrlSchema, lockKeyPrefixSchema } from '../config/env.js';
import type { JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';
import type { RateLimits } from '../ports/rate-limits.js';
import type { DrainMeter } from '../ports/drain-meter.js';
import type { TenantMeter } from '../ports/tenant-meter.js';
import type { QueuePort } from '../ports/queue.js';
import type { MetricsSink } from '../ports/metrics-sink.js';
import type { AnyDefinition } from '../core/job.js';
import { JobRegistry, isDefinition } from '../core/job-registry.js';
import { storeOptionSchema } from '../status/store.js';
import { SQS_MAX_VISIBILITY_SECONDS } from '../core/sqs-limits.js';
import { prioritySchema } from '../core/priority.js';

const queueSchema = z
  .object({
    url: queueUrlSchema,
    /** Share of free slots this queue gets when several queues have work waiting. */
    weight: z.number().int('must be a whole number').min(1, 'must be 1-100').max(100, 'must be 1-100').default(1),
    /** Where poison and unrecoverable messages go; read from the queue's RedrivePolicy when omitted. */
    deadLetterQueueUrl: queueUrlSchema.optional(),
    /** The tier this queue is the lane of: higher tiers start first (see `tiers`). */
    priority: prioritySchema.default('normal'),
  })
  .strict();

const tierWeight = z.number().int('must be a whole number').min(1, 'must be 1-100').max(100, 'must be 1-100');

/** How lanes of different tiers share the worker (src/worker/intake/lanes.ts). */
export const tiersSchema = z
  .object({
    /** strict: higher tiers first, lower ones kept at `minShare` of the turns; weighted: by `weights`. */
    pick: z.enum(['strict', 'weighted'], { message: 'must be strict or weighted' }).default('strict'),
    minShare: z.number().min(0.001, 'must be 0.001-0.5').max(0.5, 'must be 0.001-0.5').default(0.05),
    weights: z.object({ high: tierWeight, normal: tierWeight, low: tierWeight }).strict().default({ high: 6, normal: 3, low: 1 }),
  })
  .strict();

const isObject = (v: unknown) => typeof v === 'object' && v !== null;
const int = z.number().int('must be a whole number');

export const workerOptionsSchema = z
  .object({
    /** One queue URL, or several with weights. Default: SQS_JOBS_QUEUE_URL. */
    queues: z
      .array(z.union([queueUrlSchema, queueSchema], { error: 'must be a queue URL or { url, weight?, deadLetterQueueUrl?, priority? }' }), {
        error: 'must be an array of queue URLs or { url, weight, deadLetterQueueUrl, priority }',
      })
      .min(1, 'must name at least one queue')
      .optional(),
    /**
     * Priority tiers: also serve the first queue's lanes `<name>-high` and `<name>-low` (from
     * `sqs-jobs queues create --tiers`), unless `queues` names lanes itself, and start higher tiers
     * first (`pick`). `true`: the defaults.
     */
    tiers: z.union([z.boolean(), tiersSchema], { error: 'must be true, false or { pick?, minShare?, weights? }' }).default(false),
    jobs: z.union(
      [z.instanceof(JobRegistry), z.array(z.custom<AnyDefinition>(isDefinition, 'must be a job made by defineJob() or defineBatchJob()'))],
      {
        error: "must be an array of jobs made by defineJob() or defineBatchJob() (or a producer's jobs)",
      },
    ),
    concurrency: int.min(1, 'must be >= 1').default(10),
    /** Unstarted messages held beyond the free slots, so a freed slot starts at once. */
    prefetch: int.min(0, 'must be 0-1000').max(1_000, 'must be 0-1000').default(10),
    /**
     * Batch jobs (defineBatchJob): how many of their messages the worker may hold at once, filling
     * batches and being flushed; at this budget the oldest batch is flushed whatever its size.
     * Default: twice the largest maxSize, at least 2,000.
     */
    maxHeldBatchItems: int.min(1, 'must be 1-100000').max(100_000, 'must be 1-100000').optional(),
    /**
     * The most long polls open at once per queue (each asks for up to 10 messages). One is always
     * open; another opens each time a receive comes back full while the worker has room for
     * another full receive, and closes when one of its own comes back short: a deep queue is
     * received from by several, an idle one by one. Jobs of one message each are bounded by
     * `concurrency + prefetch` (two receives of ten with the defaults); a queue of batch jobs only
     * by `maxHeldBatchItems`, where, with an SQS round trip of 20 ms, ten took 0.73× the wall time
     * of four (bench/README.md, batch jobs).
     */
    receiveConcurrency: int.min(1, 'must be 1-10').max(10, 'must be 1-10').default(10),
    waitTimeSeconds: int.min(0, 'must be 0-20').max(20, 'must be 0-20 (SQS long-poll limit)').default(20),
    visibilityTimeoutSeconds: int.min(2, 'must be >= 2').max(SQS_MAX_VISIBILITY_SECONDS, 'must be <= 43200 (12 hours)').default(30),
    /** Default: half the visibility timeout. */
    heartbeatIntervalMs: int.min(100, 'must be >= 100').optional(),
    deleteFlushMs: int.min(0, 'must be 0-10000').max(10_000, 'must be 0-10000').default(50),
    shutdownTimeoutMs: int.min(0, 'must be >= 0').default(30_000),
    /** After a handler's signal fires, how long it may take to settle before it is abandoned (its lock then kept until the TTL). */
    abortGraceMs: int.min(0, 'must be 0-60000').max(60_000, 'must be 0-60000').default(1_000),
    /**
     * memcached `host:port[,…]`, or `tls://host:port[,…]` (verified with SQS_JOBS_MEMCACHED_CA and
     * SQS_JOBS_MEMCACHED_SERVERNAME when set); default SQS_JOBS_MEMCACHED. Without it there is no dedupe lock.
     */
    memcached: z.string().optional(),
    lock: implementing<JobLock>('JobLock', ['claim', 'extend', 'complete', 'release', 'markDeadLettered', 'close']).optional(),
    /**
     * Tenant caps: at most `tenantCaps[tenant]` jobs of a tenant run at once across every worker
     * sharing the permits (memcached's, or the `permits` option; standard queues). A job over its
     * tenant's cap waits in the worker (held, no slot, no receive spent) until a permit frees; with
     * `concurrency + prefetch` of its tenant's jobs waiting already (or past half its receives
     * before the DLQ), it is deferred instead: re-sent, delayed to about its turn (from how
     * fast the tenant's jobs start in that worker; `capDelaySeconds` until that is known). Neither counts as an attempt. A batch job's
     * handler call takes one permit of each capped tenant it holds items of; items of a tenant at
     * its cap wait in their batch.
     */
    tenantCaps: z
      .record(tenantSchema, z.number().int('must be a whole number').min(1, 'must be >= 1').max(1_000, 'must be <= 1000'))
      .default({}),
    capDelaySeconds: z
      .number()
      .int('must be a whole number')
      .min(1, 'must be >= 1')
      .max(900, 'must be <= 900 (SQS delay limit)')
      .default(5),
    /**
     * The longest a job found paused (`sqs-jobs pause` of its job type or tenant) is handed back for
     * when it cannot wait in the worker: as long as the pause has lasted, from 10 s up to this.
     * Each hand-back is a send, a receive and a delete; see docs/guide/pause.md for the cost.
     */
    pausedDelaySeconds: z
      .number()
      .int('must be a whole number')
      .min(10, 'must be >= 10')
      .max(900, 'must be <= 900 (SQS delay limit)')
      .default(900),
    /** Follow the pauses kept in the job store (default true when it keeps them); false: this worker ignores them. */
    pauses: z.boolean().default(true),
    /** Where the worker counts its deletes and the messages it holds unstarted (admission's drain rate and backlog). Default: memcached's, when `memcached` is set. */
    drains: implementing<DrainMeter>('DrainMeter', ['add', 'read', 'addHeld', 'readHeld', 'keepCapacity', 'keptCapacity']).optional(),
    /**
     * Where the worker reports what it sees of each tenant (the dashboard's tenants page), or false
     * for nowhere. Default: memcached's, when `memcached` is set.
     */
    tenantMeter: z.union([z.literal(false), implementing<TenantMeter>('TenantMeter', ['report', 'read'])]).optional(),
    /** The permits port behind tenant caps and exclusive batch keys. Default: memcached's, when `memcached` is set. */
    permits: implementing<Permits>('Permits (take, extend, release)', ['take', 'extend', 'release']).optional(),
    /** The rate limits port behind jobs' `rateLimit`. Default: memcached's, when `memcached` is set. */
    rateLimits: implementing<RateLimits>('RateLimits (reserve)', ['reserve']).optional(),
    /** Renamed in 0.2: `tenantCaps` and `capDelaySeconds`. */
    fairness: z.undefined({ error: 'was renamed: use tenantCaps ({ tenant: cap }) and capDelaySeconds' }).optional(),
    /** Job status (tracked jobs, progress, fan-out): `{ table, endpoint?, region?, ttlDays? }` or a JobStore; default SQS_JOBS_JOB_TABLE, else none. */
    store: storeOptionSchema,
    /**
     * Fire the schedules kept in the job store (defineSchedule; `sqs-jobs schedules sync`) whose job
     * this worker has, and send the jobs kept there until their time (`runAt` beyond SQS's 900 s).
     * Every worker with it on ticks; the store's conditional writes send each occurrence once.
     * Needs the job store.
     */
    schedules: z.boolean().default(false),
    /** A tracked job's progress is written at most once per this interval. */
    progressIntervalMs: int.min(100, 'must be 100-60000').max(60_000, 'must be 100-60000').default(1_000),
    /** The queue port: the SQS calls the worker makes. Default: the AWS SDK (src/adapters/sqs-queue.ts). */
    queue: implementing<QueuePort>('QueuePort', [
      'receive',
      'deleteBatch',
      'changeVisibilityBatch',
      'send',
      'sendBatch',
      'maximumMessageBytes',
      'deadLetterTarget',
    ]).optional(),
    /** When memcached cannot be reached: false (default) runs jobs anyway, at-least-once; true leaves them queued. */
    lockFailClosed: z.boolean().default(false),
    lockTimeoutMs: int.min(10, 'must be 10-10000').max(10_000, 'must be 10-10000').default(500),
    completedTtlSeconds: int
      .min(1, 'must be >= 1')
      .max(30 * 24 * 3600, 'must be <= 30 days (memcached relative TTL limit)')
      .default(86_400),
    lockKeyPrefix: lockKeyPrefixSchema,
    /** The SQS endpoint; default SQS_JOBS_ENDPOINT, else AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL. */
    endpoint: z.string().optional(),
    region: z.string().optional(),
    clients: z
      .undefined({ error: 'was removed: pass queue: new SqsQueuePort(pollClient, controlClient) (from sqs-jobs/adapters)' })
      .optional(),
    logger: z.custom<Logger>((v) => isObject(v) && typeof (v as Logger).child === 'function', 'must be a pino logger').optional(),
    /** Log job args with each job (off by default: args may hold personal data). */
    logArgs: z.boolean().default(false),
    /** Per-job metrics: where they go (default SQS_JOBS_METRICS, else cloudwatch), namespace, flush interval. */
    metrics: z
      .object({
        sink: z
          .union(
            [
              z.enum(['cloudwatch', 'emf', 'off']),
              z.custom<MetricsSink>((v) => isObject(v) && typeof (v as MetricsSink).publish === 'function', 'must implement MetricsSink'),
            ],
            {
              error: "must be 'cloudwatch', 'emf', 'off' or an object with publish(namespace, datums)",
            },
          )
          .optional(),
        namespace: metricsNamespaceSchema.optional(),
        flushIntervalMs: int.min(1_000, 'must be >= 1000').default(60_000),
        /** The CloudWatch endpoint; default AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL (never the SQS endpoint). */
        endpoint: endpointSchema.optional(),
      })
      .strict()
      .default({ flushIntervalMs: 60_000 }),
    /** Stop on SIGTERM and SIGINT (a second signal stops at once). */
    handleSignals: z.boolean().default(true),
    /**
     * OpenTelemetry: with `@opentelemetry/api` installed (an optional peer dependency), each run of
     * a handler is a `process <job>` span, a child of the context the job was sent under. Default
     * true; false turns it off. Without the API installed it is off and costs nothing.
     */
    tracing: z.boolean().default(true),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.heartbeatIntervalMs !== undefined && o.heartbeatIntervalMs >= o.visibilityTimeoutSeconds * 1000) {
      ctx.addIssue({
        code: 'custom',
        path: ['heartbeatIntervalMs'],
        message: `must be less than visibilityTimeoutSeconds (${o.visibilityTimeoutSeconds} s)`,
      });
    }
    if (o.lock !== undefined && o.memcached !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['lock'], message: 'give either lock or memcached, not both' });
    }
  });

/**
 * Options of createWorker: its queues, jobs, concurrency, polling, shutdown, dedupe lock, tenant caps, job store,
 * logging and metrics. Only `jobs` is required. Unset, queues come from SQS_JOBS_QUEUE_URL, memcached from
 * SQS_JOBS_MEMCACHED, the store from SQS_JOBS_JOB_TABLE, the endpoint from SQS_JOBS_ENDPOINT, metrics from SQS_JOBS_METRICS.
 */
export type WorkerOptions = z.input<typeof workerOptionsSchema>;
