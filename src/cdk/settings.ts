import { dlqArchiveSchema } from './dlq-archive.js';
import { z } from 'zod';
import { thresholdIssues } from './alarm-thresholds.js';
import { lambdaSettingSchema, lambdaSettingsIssues, lambdaVisibilitySeconds } from './lambda-settings.js';
import { eventSettingSchema, eventSettingsIssues } from './event-settings.js';
import { scheduleSettingSchema, scheduleSettingsIssues } from './schedule-settings.js';

/**
 * Deployment settings: what the `SqsJobs` construct deploys, and what `npm run infra:local` gives the
 * local stack's queues, so local and deployed queues get the same attributes. Each has a default
 * (`DEFAULT_SETTINGS`); `resolveSettings` puts the given ones on top and checks them all.
 */
const settingsSchema = z
  .object({
    queueName: z.string().regex(/^[A-Za-z0-9_-]{1,75}$/, 'must be 1-75 letters, digits, - or _'),
    /** Receives before SQS moves a message to the DLQ. */
    maxReceiveCount: z.number().int().min(1).max(1000),
    /** The p99 handler time you expect; the visibility timeout is twice this. */
    p99ProcessingSeconds: z.number().positive().max(21_600, 'must be <= 21600 (twice it must fit in SQS 12-hour limit)'),
    /** Alarm when the oldest message is older than this (the queue itself: the normal lane). */
    oldestMessageSlaSeconds: z.number().int().min(60),
    /** With tiers: the high and low lanes' own SLAs (default: a tenth of oldestMessageSlaSeconds, at least 60, and six times it). */
    laneSlaSeconds: z
      .object({ high: z.number().int().min(60).optional(), low: z.number().int().min(60).optional() })
      .strict()
      .optional(),
    /** Alarm when more messages than this wait for 5 minutes (default: what maxTasks × concurrency clear within the SLA). */
    backlogAlarmMessages: z.number().int().min(1).optional(),
    messageRetentionSeconds: z.number().int().min(60).max(1_209_600),
    /** Alarm this long before SQS would delete the oldest message of the queue, or of the DLQ, unread (default: a quarter of messageRetentionSeconds, at most a day). */
    retentionWarningSeconds: z.number().int().min(60).optional(),
    /** The module the worker loads its jobs from, inside the image. */
    jobsModule: z.string().min(1),
    concurrency: z.number().int().min(1),
    minTasks: z.number().int().min(1, 'must be >= 1: a worker is always running'),
    maxTasks: z.number().int().min(1),
    cpu: z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(2048), z.literal(4096)]),
    memoryMiB: z.number().int().min(512),
    shutdownTimeoutSeconds: z.number().int().min(1),
    waitTimeSeconds: z.number().int().min(0).max(20),
    metrics: z.enum(['cloudwatch', 'emf']),
    metricsNamespace: z.string().regex(/^[A-Za-z0-9.\-_/#:]{1,255}$/),
    /**
     * Create an ElastiCache memcached cluster (`transitEncryption`: with in-transit encryption, the
     * workers on `tls://`), or use an existing host:port (`tls://host:port` for one that speaks TLS).
     */
    memcached: z.union([
      // One node: the memcached client has no ElastiCache auto-discovery, and the lock fails open if it is lost.
      z.object({ create: z.literal(true), nodeType: z.string(), transitEncryption: z.boolean().optional() }).strict(),
      z.object({ endpoint: z.string().regex(/^(tls:\/\/)?[^\s:/]+:\d{1,5}$/, 'must be host:port, or tls://host:port') }).strict(),
    ]),
    /** Tenant fairness: also create `<queueName>-spill`, polled by the workers at a fifth of the main queue's weight. */
    spillover: z.boolean(),
    /**
     * Priority tiers: also create `<queueName>-high` and `<queueName>-low` (same settings and DLQ),
     * served by the workers strictly (lower tiers keep 5% of the turns) or by weight (6 : 3 : 1).
     */
    tiers: z.union([z.literal(false), z.enum(['strict', 'weighted'])], { error: 'must be false, "strict" or "weighted"' }),
    /**
     * Job status, progress and fan-out: a DynamoDB table (on-demand, TTL, the due index of schedules
     * and kept jobs), its name given to the workers as SQS_JOBS_JOB_TABLE. `schedules`: the workers
     * fire the schedules in it and send the jobs kept there until their time (`--schedules`).
     * `jobsList`: the jobs list's indexes (core/job-list-index.ts) for `sqs-jobs jobs list` and the
     * dashboard's Jobs page; true: all three; a number: the first that many (jobs-by-state,
     * jobs-by-job, jobs-by-tenant), for a table that exists, as CloudFormation adds one index per
     * update (docs/operations/deploy.md). Each costs ~2 write units per state change.
     */
    jobStore: z.union([
      z.literal(false),
      z
        .object({
          pointInTimeRecovery: z.boolean().default(false),
          schedules: z.boolean().default(false),
          jobsList: z.union([z.boolean(), z.number().int().min(0).max(3)]).default(false),
        })
        .strict(),
    ]),
    /**
     * Jobs that run on events, as `sqs-jobs events create` sets them up: each event's SNS topic, each
     * job's queue and DLQ (named after the job), the queue policy and the subscription (raw delivery,
     * the job's filter policy). The workers serve these queues too, so the jobs module must export the jobs.
     */
    events: z.array(eventSettingSchema),
    /**
     * Who fires the schedules the jobs module declares: `workers` (their tick, with
     * `jobStore.schedules`: `schedules sync` runs at each deploy) or `eventbridge` (an EventBridge
     * Scheduler schedule each, made from `schedules`, sending to the queue; a synth error for what
     * it cannot express: seconds, an overlap or catch-up rule).
     */
    scheduler: z.enum(['workers', 'eventbridge']),
    /** The declared schedules, for `scheduler: 'eventbridge'`: `scheduleSettingsOf(Object.values(await import('./jobs.js')))`. */
    schedules: z.array(scheduleSettingSchema),
    /**
     * Archive dead letters to S3 before the DLQ's 14 days end: `{ olderThanDays, bucket?, prefix?,
     * schedule?, kmsKeyArn?, lifecycle? }` runs `sqs-jobs dlq archive` as a scheduled Fargate task
     * (dlq-archive.ts); false: none.
     */
    dlqArchive: z.union([z.literal(false), dlqArchiveSchema]),
    /** Optional: an address the alarms email (an SNS topic is created for it). */
    alarmEmail: z.email().optional(),
    /** Where the jobs run: `fargate` (a service running `sqs-jobs worker`) or `lambda` (a function on the queue's event source mapping, `lambda`). */
    runtime: z.enum(['fargate', 'lambda']),
    lambda: lambdaSettingSchema,
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.maxTasks < s.minTasks) ctx.addIssue({ code: 'custom', path: ['maxTasks'], message: 'must be >= minTasks' });
    if (stopTimeoutSeconds(s) > 120) {
      ctx.addIssue({
        code: 'custom',
        path: ['shutdownTimeoutSeconds'],
        message: `shutdownTimeoutSeconds + waitTimeSeconds + 10 must be <= 120 (the Fargate stopTimeout limit); it is ${stopTimeoutSeconds(s)}`,
      });
    }
    for (const issue of thresholdIssues(s)) ctx.addIssue({ code: 'custom', ...issue });
    if (s.runtime === 'lambda') for (const issue of lambdaSettingsIssues(s)) ctx.addIssue({ code: 'custom', ...issue });
    for (const issue of eventSettingsIssues(s.events, { served: servedQueueNames(s), deadLetterQueue: `${s.queueName}-dlq` }))
      ctx.addIssue({ code: 'custom', ...issue });
    if (s.scheduler === 'eventbridge') for (const issue of scheduleSettingsIssues(s.schedules)) ctx.addIssue({ code: 'custom', ...issue });
    else if (s.schedules.length > 0)
      ctx.addIssue({
        code: 'custom',
        path: ['schedules'],
        message: "read only with scheduler: 'eventbridge' (the workers' schedules are put by the deploy's schedules sync, from jobsModule)",
      });
  });

/** Every deployment setting, resolved and checked: what `resolveSettings` returns and `SqsJobs.settings` holds. */
export type DeploySettings = z.output<typeof settingsSchema>;
/** Settings as given: any of them, the rest from `DEFAULT_SETTINGS`. */
export type DeploySettingsInput = Partial<z.input<typeof settingsSchema>>;

/**
 * The value of each setting not given: queue `jobs`, 5 receives before the DLQ, 1 to 10 Fargate
 * tasks (512 CPU units, 1024 MiB) of 10 concurrent jobs, a created `cache.t4g.micro` memcached; no
 * spillover, tiers, job store or events.
 */
export const DEFAULT_SETTINGS: DeploySettings = {
  queueName: 'jobs',
  maxReceiveCount: 5,
  p99ProcessingSeconds: 30,
  oldestMessageSlaSeconds: 600,
  messageRetentionSeconds: 4 * 24 * 3600,
  jobsModule: 'dist/handlers/index.js',
  concurrency: 10,
  minTasks: 1,
  maxTasks: 10,
  cpu: 512,
  memoryMiB: 1024,
  shutdownTimeoutSeconds: 30,
  waitTimeSeconds: 20,
  metrics: 'cloudwatch',
  metricsNamespace: 'SqsJobs',
  memcached: { create: true, nodeType: 'cache.t4g.micro' },
  spillover: false,
  tiers: false,
  jobStore: false,
  events: [],
  scheduler: 'workers',
  schedules: [],
  dlqArchive: false,
  runtime: 'fargate',
  lambda: lambdaSettingSchema.parse({}),
};

/** Defaults with `overrides` on top (an object, or JSON text as `cdk -c sqsJobs='{...}'` passes it). */
export function resolveSettings(overrides: unknown = {}): DeploySettings {
  const given: unknown = typeof overrides === 'string' ? JSON.parse(overrides) : (overrides ?? {});
  // A setting given as undefined keeps its default.
  const defined = Object.fromEntries(Object.entries(given as object).filter(([, value]) => value !== undefined));
  const result = settingsSchema.safeParse({ ...DEFAULT_SETTINGS, ...defined });
  if (!result.success) {
    throw new Error(
      `invalid sqsJobs deployment settings: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return result.data;
}

/** Visibility timeout = 2 × p99 processing time (whole seconds, at least 10 s); on Lambda, six times the function's timeout unless given. */
export function visibilityTimeoutSeconds(
  s: Pick<DeploySettings, 'p99ProcessingSeconds'> & Partial<Pick<DeploySettings, 'runtime' | 'lambda'>>,
): number {
  if (s.runtime === 'lambda' && s.lambda !== undefined) return lambdaVisibilitySeconds({ ...s, lambda: s.lambda });
  return Math.max(10, Math.ceil(2 * s.p99ProcessingSeconds));
}

/**
 * How long ECS waits after SIGTERM before SIGKILL: the worker's shutdown deadline, plus an open
 * long poll returning (a graceful stop does not abort it), plus room to flush deletes and metrics.
 */
export function stopTimeoutSeconds(s: Pick<DeploySettings, 'shutdownTimeoutSeconds' | 'waitTimeSeconds'>): number {
  return s.shutdownTimeoutSeconds + s.waitTimeSeconds + 10;
}

/** The stack's own queues the workers serve: the queue, its spillover queue, the tiers' lanes. */
function servedQueueNames(s: Pick<DeploySettings, 'queueName' | 'spillover' | 'tiers'>): string[] {
  const q = s.queueName;
  return [q, ...(s.spillover ? [`${q}-spill`] : []), ...(s.tiers === false ? [] : [`${q}-high`, `${q}-low`])];
}

/** The queue part, in the shape sqs-jobs' createQueues takes. */
export function queueSpec(s: DeploySettings) {
  return {
    name: s.queueName,
    maxReceiveCount: s.maxReceiveCount,
    visibilityTimeout: visibilityTimeoutSeconds(s),
    messageRetentionSeconds: s.messageRetentionSeconds,
    spillover: s.spillover,
    tiers: s.tiers !== false,
  };
}
