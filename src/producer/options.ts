import type { QueuePort } from '../ports/queue.js';
import type { Allowances } from '../ports/allowances.js';
import { z } from 'zod';
import { implementing, queueUrlSchema } from '../config/env.js';
import { jobIdSchema, sqsIdText, tenantSchema } from '../core/envelope.js';
import { prioritySchema } from '../core/priority.js';
import { storeOptionSchema } from '../status/store.js';
import { cancelOptionsSchema } from '../status/cancel-job.js';
import { admissionOptionsSchema } from './admission/admission.js';
import { eventsOptionSchema } from './publish.js';
import type { AnyDefinition } from '../core/job.js';
import { JobRegistry, isDefinition } from '../core/job-registry.js';
import { SQS_MAX_MESSAGE_BYTES } from '../core/sqs-limits.js';
import { ValidationError } from '../core/errors.js';
import { parseWith } from '../core/validation.js';
import { KEY_RULES, keyFields, MAX_DELAY_SECONDS } from './key-options.js';

/** The producer's options and enqueue options: schemas, types and limits (validated before any call). */

export const DEFAULT_MAX_MESSAGE_BYTES = 65_536;

export { MAX_DELAY_SECONDS };
const RUN_AT_RULE = "must be a Date or an ISO 8601 date-time with its offset ('2027-01-01T03:00:00Z'), within a year from now";

export const enqueueOptionsSchema = z
  .object({
    jobId: jobIdSchema.optional(),
    /** Run it this long from now: up to 900 s SQS's own delay; longer (up to a year) kept in the job store until then. */
    delaySeconds: z
      .number()
      .int('must be a whole number of seconds')
      .min(0, 'must be >= 0')
      .max(MAX_DELAY_SECONDS, `must be <= ${MAX_DELAY_SECONDS} (a year)`)
      .optional(),
    /** Run it at this time (a past one: now); as `delaySeconds`, within a year. */
    runAt: z
      .union([z.date({ error: RUN_AT_RULE }), z.iso.datetime({ offset: true, error: RUN_AT_RULE })], { error: RUN_AT_RULE })
      .refine((at) => (typeof at === 'string' ? Date.parse(at) : at.getTime()) <= Date.now() + MAX_DELAY_SECONDS * 1000, RUN_AT_RULE)
      .optional(),
    tenant: tenantSchema.optional(),
    groupId: sqsIdText.optional(),
    deduplicationId: sqsIdText.optional(),
    /** Record the job's status in the job store (the producer's `store`): `waiting` now, then the worker's updates. */
    track: z.boolean().optional(),
    /** The job id of the fan-out this job is a child of (ctx.fanOut sets it): its end is counted there. */
    parent: jobIdSchema.optional(),
    /** This job's tier, instead of its definition's (needs the producer option `tiers`). */
    priority: prioritySchema.optional(),
    ...keyFields,
  })
  .strict()
  .refine((o) => o.runAt === undefined || o.delaySeconds === undefined, {
    path: ['runAt'],
    message: 'give runAt or delaySeconds, not both',
  })
  .refine((o) => KEY_RULES.filter((rule) => o[rule] !== undefined).length <= 1, {
    path: ['singleton'],
    message: 'give one of singleton, throttle and debounce, not more',
  })
  .refine((o) => o.debounce === undefined || (o.runAt === undefined && o.delaySeconds === undefined && o.jobId === undefined), {
    path: ['debounce'],
    message: 'sets the job id and the time itself: give no jobId, delaySeconds or runAt with it',
  });

type Timing = Pick<z.output<typeof enqueueOptionsSchema>, 'runAt' | 'delaySeconds'>;

/** When a job is to run by its options (runAt, or `nowMs` + delaySeconds), in epoch milliseconds. */
export function dueMsOf(opts: Timing, nowMs: number): number {
  if (opts.runAt === undefined) return nowMs + (opts.delaySeconds ?? 0) * 1000;
  return typeof opts.runAt === 'string' ? Date.parse(opts.runAt) : opts.runAt.getTime();
}

/** How long from `nowMs` a job is put off by its options, in whole seconds (a part rounded up: never early); 0 when not. */
export function delayOf(opts: Timing, nowMs: number): number {
  return Math.max(0, Math.ceil((dueMsOf(opts, nowMs) - nowMs) / 1000));
}

/** Options of one `enqueue`: job id, delay, tenant, FIFO group and deduplication id, tracking, fan-out parent, tier. */
export type EnqueueOptions = z.input<typeof enqueueOptionsSchema>;

/** Enqueue options checked (ValidationError naming `options.<field>`, as `invalid <what>`). */
export function parseEnqueueOptions(options: unknown, what: string): z.output<typeof enqueueOptionsSchema> {
  return parseWith(enqueueOptionsSchema, options, 'options', (issues) => new ValidationError('OPTIONS_INVALID', `invalid ${what}`, issues));
}
/** Options of `enqueueMany`, shared by every job sent: those of `enqueue` without `jobId`, `deduplicationId` and keys, plus `jobIds`. */
export type EnqueueManyOptions = Omit<EnqueueOptions, 'jobId' | 'deduplicationId' | 'singleton' | 'throttle' | 'debounce'> & {
  /** One job id per entry of argsList, in order; new ids where omitted. */
  jobIds?: readonly string[];
};

/** What an enqueued job got: its job id (yours or a new UUID) and the SQS message id. */
export interface EnqueueResult {
  readonly jobId: string;
  /** SQS's id of its message; undefined for a job put off beyond SQS's delay, kept in the job store until its time, or not sent (`key`). */
  readonly messageId: string | undefined;
  /**
   * With a key: what it did. `sent`: this job was sent (a singleton's `replaced` a waiting one);
   * `skipped` (singleton) or `throttled`: nothing was sent, and `jobId` is the job that holds the key;
   * `debounced`: the burst's job (`jobId`) now has these args.
   */
  readonly key?: 'sent' | 'replaced' | 'skipped' | 'throttled' | 'debounced';
}

export const producerOptionsSchema = z
  .object({
    queueUrl: z.string().optional(),
    endpoint: z.string().optional(),
    region: z.string().optional(),
    jobs: z
      .union(
        [
          z.instanceof(JobRegistry),
          z.array(z.custom<AnyDefinition>(isDefinition, 'must be a job made by defineJob() or defineBatchJob()')),
        ],
        {
          error: "must be an array of jobs made by defineJob() or defineBatchJob() (or a producer's jobs)",
        },
      )
      .optional(),
    maxMessageBytes: z
      .number()
      .int('must be a whole number')
      .min(1024, 'must be >= 1024')
      .max(SQS_MAX_MESSAGE_BYTES, `must be <= ${SQS_MAX_MESSAGE_BYTES} (SQS limit)`)
      .optional(),
    client: z.undefined({ error: 'was removed: pass queue: new SqsQueuePort(client) (from sqs-jobs/adapters)' }).optional(),
    /**
     * The queue port the producer sends through (send, sendBatch, maximumMessageBytes). Default: the
     * AWS SDK on a client of its own; `new SqsQueuePort(client)` from sqs-jobs/adapters for yours.
     */
    queue: implementing<QueuePort>('QueuePort (send, sendBatch, maximumMessageBytes)', [
      'send',
      'sendBatch',
      'maximumMessageBytes',
    ]).optional(),
    /** Where `track: true` jobs record their status: `{ table, endpoint?, region?, ttlDays? }` or a JobStore; default SQS_JOBS_JOB_TABLE. */
    store: storeOptionSchema,
    /**
     * Delays up to this are SQS's own (DelaySeconds); a job put off longer is kept in the job store
     * and sent by the workers' tick shortly before its time. Default 900, SQS's limit: lower only to
     * test that path without waiting a quarter of an hour.
     */
    maxSqsDelaySeconds: z.number().int('must be a whole number').min(0, 'must be 0-900').max(900, 'must be 0-900').default(900),
    /** Spillover (src/producer/spillover.ts): a tenant's jobs beyond its allowance go to the spillover queue. */
    spillover: z
      .object({
        queueUrl: queueUrlSchema,
        ratePerSecond: z.number().positive('must be > 0').max(100_000).default(10),
        burst: z.number().int('must be a whole number').min(1, 'must be >= 1').max(1_000_000).default(20),
        weights: z.record(tenantSchema, z.number().positive('must be > 0').max(1_000)).default({}),
        /** Meter a tenant's jobs under another key, `(tenant) => group`: one customer's many tenant names share one allowance. */
        tenantGroup: z.custom<(tenant: string) => string>((v) => typeof v === 'function', 'must be a function').optional(),
        /**
         * Where the allowance is kept: shared by every producer on the workers' memcached (the
         * `memcached` option or SQS_JOBS_MEMCACHED, default when set), an Allowances port, or false
         * for this process's own buckets.
         */
        allowances: z.union([z.literal(false), implementing<Allowances>('Allowances (take)', ['take'])]).optional(),
      })
      .strict()
      .optional(),
    /** For cancel(): the workers' memcached (default SQS_JOBS_MEMCACHED), or a JobLock, and their lockKeyPrefix. */
    ...cancelOptionsSchema.omit({ store: true }).shape,
    /**
     * Tenants with a queue of their own: their jobs go there (not through spillover, whatever their
     * priority), and workers poll it with a weight (`queues: [{ url, weight }]`), which is how a
     * tenant's weight holds when every tenant is backlogged. Each must be a queue of the same kind
     * (standard or FIFO) as `queueUrl`, with its DLQ (`sqs-jobs queues create`).
     */
    tenantQueues: z.record(tenantSchema, queueUrlSchema).default({}),
    /**
     * Priority tiers: send each job to its tier's lane, `<queue>-high` or `<queue>-low` beside the
     * queue (normal), made by `sqs-jobs queues create --tiers`. Without it every job goes to the queue.
     */
    tiers: z.boolean().default(false),
    /**
     * What enqueue does while the job's queue, job type or tenant is paused (`sqs-jobs pause`):
     * `accept` (default: it waits in SQS for the resume) or `refuse` (JobPausedError; the HTTP API
     * answers 503 with Retry-After). Refusing needs the job store; it asks memcached each second.
     */
    whilePaused: z.enum(['accept', 'refuse']).default('accept'),
    /** Admission: refuse jobs (QueueFullError, HTTP 429) while the backlog is over the workers' drain capacity × slaSeconds. */
    admission: admissionOptionsSchema.optional(),
    /** Where `publish` sends events: `{ endpoint?, account?, topics? }` (default: SNS, the queue's account). */
    events: eventsOptionSchema,
    /**
     * OpenTelemetry: with `@opentelemetry/api` installed (an optional peer dependency), each
     * enqueue makes a `send <queue>` span and its jobs carry its context (each publish:
     * `send <topic>`, carried by its events). Default true; false turns it off. Without the API
     * installed it is off and costs nothing.
     */
    tracing: z.boolean().default(true),
    /** Renamed in 0.2: `spillover`, whose `queueUrl` was `spilloverQueueUrl`. */
    fairness: z.undefined({ error: 'was renamed: use spillover ({ queueUrl, ratePerSecond, burst, weights })' }).optional(),
  })
  .strict();

/**
 * Options of createProducer: its queue, jobs, message size limit, job store, spillover, tiers, admission, events
 * and tracing. Unset, the queue comes from SQS_JOBS_QUEUE_URL, the endpoint from SQS_JOBS_ENDPOINT (else the AWS
 * variables), the job store from SQS_JOBS_JOB_TABLE and memcached from SQS_JOBS_MEMCACHED.
 */
export type ProducerOptions = z.input<typeof producerOptionsSchema>;

/** enqueueMany's list checked: an array, and with `jobIds` one id per entry. */
export function checkManyList(jobName: string, argsList: unknown, jobIds: readonly string[] | undefined): void {
  if (!Array.isArray(argsList))
    throw new ValidationError('ARGS_INVALID', `enqueueMany("${jobName}")`, [{ field: 'argsList', rule: 'must be an array' }]);
  if (jobIds !== undefined && jobIds.length !== argsList.length) {
    throw new ValidationError('OPTIONS_INVALID', `invalid enqueueMany options for job "${jobName}"`, [
      { field: 'options.jobIds', rule: `must have one id per entry (${argsList.length}), got ${jobIds.length}` },
    ]);
  }
}

/** The job an enqueue names: a definition, or the name of one the producer was given. */
export function resolveJob(jobs: JobRegistry, job: AnyDefinition | string): AnyDefinition {
  if (typeof job === 'string') return jobs.get(job);
  if (!isDefinition(job)) {
    throw new ValidationError('OPTIONS_INVALID', 'enqueue', [
      { field: 'job', rule: 'must be a job made by defineJob() or defineBatchJob(), or the name of a registered job' },
    ]);
  }
  return job;
}
