import { z } from 'zod';
import { implementing, lockKeyPrefixSchema } from '../config/env.js';
import type { Schedules } from '../ops/schedules.js';
import type { Pauses } from '../ops/pauses.js';
import type { AdmissionState } from '../producer/admission/admission.js';
import { Producer } from '../producer/producer.js';
import type { MetricsReader } from '../ports/metrics-reader.js';
import type { ArchiveStore } from '../ports/archive.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import type { QueuePort } from '../ports/queue.js';
import type { StatusStore } from '../ports/status-store.js';
import type { TenantMeter } from '../ports/tenant-meter.js';
import type { CancelResult } from '../status/cancel.js';
import { storeOptionSchema } from '../status/store.js';
import type { AuditLog } from './audit.js';
import type { AuthGate } from './auth.js';
import { dashboardAuthSchema } from './auth-config.js';

/** A verdict on one request: true lets it through; `{ user }` too, naming the user in the audit lines; false answers 403; a Response is answered as it is. */
export type Authorize = (request: Request) => AuthorizeAnswer | Promise<AuthorizeAnswer>;

/** What `authorize` answers: true, `{ user }` (let through, the user named), false (403) or a Response (answered as it is). */
export type AuthorizeAnswer = boolean | Response | { readonly user: string };

/** The options of createDashboard, checked where they enter (resolveDashboard). */
export const dashboardOptionsSchema = z
  .object({
    /** The job queues to show (URLs), each with its DLQ, spillover queue and tier lanes. Default: SQS_JOBS_QUEUE_URL. */
    queues: z.array(z.string()).min(1, 'must name at least one queue').optional(),
    /** Where it is mounted, e.g. `/dashboard` (no trailing slash). Default: the root. */
    basePath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /dashboard, with no trailing slash')
      .default(''),
    /** Show, never act: every action answers 403 and no button is shown. */
    readOnly: z.boolean().default(false),
    /**
     * Sign-in of its own: bearer tokens, basic auth users (from `file`, or given), or the signed
     * header of an ALB that signs users in (`trustAlb`: its ARN). When any is set, every request
     * needs one (401 otherwise). Each field unset: SQS_JOBS_DASHBOARD_AUTH_FILE,
     * SQS_JOBS_DASHBOARD_TOKEN, SQS_JOBS_DASHBOARD_USERS, SQS_JOBS_DASHBOARD_TRUST_ALB (and, for
     * tests, SQS_JOBS_DASHBOARD_ALB_KEYS_URL).
     */
    auth: dashboardAuthSchema.optional(),
    /** Where the audit line of each action goes (pino's info and warn). Default: JSON lines on stdout, at info whatever SQS_JOBS_LOG_LEVEL says. */
    logger: z
      .custom<AuditLog>(
        (v) =>
          typeof v === 'object' && v !== null && ['info', 'warn'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
        'must be a pino logger (or have info and warn)',
      )
      .optional(),
    /** Asked about every request after the sign-in (the mounted form's authentication and authorization); `{ user }` names the user. */
    authorize: z.custom<Authorize>((v) => typeof v === 'function', 'must be a function').optional(),
    /**
     * The Host headers it answers (`host:port`, lower case), or a function that says; others get
     * 421. Default: any (mounted behind your server's own routing). The CLI allows only the address
     * it listens on (and localhost), against DNS rebinding.
     */
    allowedHosts: z
      .union([z.array(z.string().min(1)), z.custom<(host: string) => boolean>((v) => typeof v === 'function', 'must be a function')])
      .optional(),
    /** The oldest message's age above which a queue is in alarm (and the admission SLA shown); none: only the DLQ alarm. */
    slaSeconds: z.number().positive('must be > 0').optional(),
    /** The workers' metrics namespace. Default: SQS_JOBS_METRICS_NAMESPACE or SqsJobs. */
    namespace: z.string().optional(),
    /** The window rates and timings are read over, in minutes. */
    windowMinutes: z.number().int().min(1, 'must be 1-1440').max(1_440, 'must be 1-1440').default(60),
    /** How often a page refreshes itself, in seconds (0: never). */
    refreshSeconds: z.number().int().min(0, 'must be 0-3600').max(3_600, 'must be 0-3600').default(5),
    /** Dead letters looked at per page of the DLQ browser. */
    deadLetterLimit: z.number().int().min(1, 'must be 1-1000').max(1_000, 'must be 1-1000').default(200),
    endpoint: z.string().optional(),
    region: z.string().optional(),
    cloudwatchEndpoint: z.string().optional(),
    /** The job store (job lookup): `{ table, endpoint?, region? }` or a JobStore; default SQS_JOBS_JOB_TABLE, else the producer's. */
    store: storeOptionSchema,
    /** The workers' memcached (`[tls://]host:port[,…]`), for cancel (with the store) and the tenants page. Default: SQS_JOBS_MEMCACHED. */
    memcached: z.string().optional(),
    /** The workers' lockKeyPrefix (default `sqsjobs:`): cancel marks and tenant reports are where they put and look for them. */
    lockKeyPrefix: lockKeyPrefixSchema,
    /** Where the workers report their tenants (the tenants page). Default: the `memcached` given's. */
    tenantMeter: implementing<TenantMeter>('TenantMeter', ['report', 'read']).optional(),
    /** A producer with admission: its view of each queue is shown. */
    producer: z.instanceof(Producer, { error: 'must be a Producer (createProducer())' }).optional(),
    /**
     * The dead letters `sqs-jobs dlq archive` wrote to S3, listed (read-only) on the Archived page:
     * `s3://bucket/prefix`, or `{ store, prefix, url }` (a store that lists and reads, the prefix
     * its records are under, and the `s3://` URL the page names in its replay command). None: the page is not in the nav.
     */
    archive: z
      .union([
        z.string(),
        z
          .object({
            store: implementing<Pick<ArchiveStore, 'list' | 'get'>>('an archive store (list, get)', ['list', 'get']),
            prefix: z.string().regex(/(^|\/)$/, "must be '' or end with '/'"),
            url: z.string().regex(/^s3:\/\/./, 'must be the s3:// URL it is read from (what `dlq replay --from` takes)'),
          })
          .strict(),
      ])
      .optional(),
    /** S3's endpoint, for an `archive` given as `s3://`. Default: AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL (never the SQS one). */
    s3Endpoint: z.string().optional(),
  })
  .strict()
  .refine((o) => o.s3Endpoint === undefined || typeof o.archive === 'string', {
    path: ['s3Endpoint'],
    message: 'applies to an archive given as s3://bucket/prefix: give that archive too',
  });

/**
 * Options of createDashboard: the queues shown, where it is mounted, who may use it and what it reads.
 * Unset, the queues come from SQS_JOBS_QUEUE_URL, the namespace from SQS_JOBS_METRICS_NAMESPACE, the job
 * store from SQS_JOBS_JOB_TABLE, memcached from SQS_JOBS_MEMCACHED, the SQS endpoint from SQS_JOBS_ENDPOINT.
 */
export type DashboardOptions = z.input<typeof dashboardOptionsSchema>;

/** What the dashboard reads and acts through. */
export interface DashboardSources {
  readonly queue: QueuePort;
  readonly admin: QueueAdmin;
  readonly metrics: MetricsReader;
  readonly store: StatusStore | undefined;
  readonly cancel: ((jobId: string) => Promise<CancelResult>) | undefined;
  readonly admission: ((queueUrl: string) => AdmissionState | undefined) | undefined;
  /** What the workers report of each tenant; undefined when no memcached (or meter) is given. */
  readonly tenants: TenantMeter | undefined;
  /** The schedules in the job store; undefined without one (or one that keeps none). */
  readonly schedules: Schedules | undefined;
  /** The pauses in the job store (told to the workers through their memcached); undefined without one. */
  readonly pauses: Pauses | undefined;
  /** The dead letters archived to S3 (the `archive` option); undefined without one. */
  readonly archive: ArchiveSource | undefined;
  close(): void;
}

/** An archive of dead letters to list: its store, the prefix its records are under, and its name on the page (`s3://bucket/prefix`). */
export interface ArchiveSource {
  readonly store: Pick<ArchiveStore, 'list' | 'get'>;
  readonly prefix: string;
  readonly url: string;
}

/** The options resolved: what the dashboard shows, how it is mounted, who may use it. */
export interface DashboardSettings {
  readonly queues: readonly string[];
  readonly basePath: string;
  readonly readOnly: boolean;
  readonly authorize: Authorize | undefined;
  /** Checks each request's credential (none configured: lets every request through). */
  readonly gate: AuthGate;
  /** Where each action's audit line goes. */
  readonly audit: AuditLog;
  readonly allowedHosts: readonly string[] | ((host: string) => boolean) | undefined;
  readonly slaSeconds: number | undefined;
  readonly namespace: string;
  readonly windowMinutes: number;
  readonly refreshSeconds: number;
  readonly deadLetterLimit: number;
}
