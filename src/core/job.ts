import { z } from 'zod';
import { type Priority, prioritySchema } from './priority.js';
import { type RateLimit, type RateLimitSpec, rateLimitOf, rateLimitSchema } from './rate-limit.js';
import type { Logger } from 'pino';
import { ValidationError } from './errors.js';
import { parseWith } from './validation.js';
import {
  type BackoffPolicy,
  backoffSchema,
  DEFAULT_BACKOFF,
  functionSchema,
  jobNameSchema,
  timeoutMsSchema,
  zodSchema,
} from './definition-rules.js';
import type { AnyBatchJob } from './batch-job.js';
import { type AnyEvent, onEventSchema, type Subscription, subscriptionOf } from './event.js';

/** `ctx.progress`: report how far a job is. Cheap to call in a tight loop: writes are coalesced. */
export interface ProgressFn {
  /** Items done so far (never goes down in the store), and optionally how many there are. */
  (done: number, total?: number): void;
  /** Add to `done` (atomic across workers: many jobs may count into one record). */
  add(n: number): void;
  /** A small JSON value to show with the status (at most 4 KB; larger values are dropped). */
  data(value: unknown): void;
}

/**
 * What a handler gets besides its arguments. Read what you need from it (destructuring works); a
 * spread copy (`{ ...ctx }`) leaves out `signal`, `log`, `enqueuedAt`, `fanOut` and `progress`, which are made on first read.
 */
export interface JobContext {
  /** The job id: the dedupe key, the same across producer retries and SQS redeliveries. */
  readonly jobId: string;
  readonly jobName: string;
  readonly messageId: string;
  /** 1 on the first delivery; SQS's ApproximateReceiveCount. */
  readonly attempt: number;
  /** Aborted when the job times out, its lease is lost, or the worker is shutting down. */
  readonly signal: AbortSignal;
  /** A pino child logger bound to job id, job name, message id and attempt. */
  readonly log: Logger;
  readonly tenant: string | undefined;
  readonly enqueuedAt: Date;
  readonly queueUrl: string;
  /** The event this run is for (a job defined with `on`): its name and id; undefined for an enqueued job. */
  readonly event: { readonly name: string; readonly id: string } | undefined;
  /**
   * Report progress (tracked jobs; a no-op otherwise): `ctx.progress(done, total?)`,
   * `ctx.progress.add(n)`, `ctx.progress.data(value)`. Coalesced into at most one write per
   * `progressIntervalMs`.
   */
  readonly progress: ProgressFn;
  /**
   * Split this job into one child job per entry of `argsList` (needs a job store). The total is
   * recorded before any child is sent; each child's end (completed or dead-lettered) is counted
   * once; the child that completes the set sends `onComplete`'s job once. Resumes where it left off
   * when this job is retried.
   */
  fanOut<C extends AnyDefinition>(
    child: C,
    argsList: readonly JobArgs<C>[],
    options?: FanOutOptions,
  ): Promise<{ parentId: string; total: number }>;
}

/** How `ctx.fanOut` sends children and what it sends when they have all ended. */
export interface FanOutOptions {
  /** Sent once, when every child has ended (completed or dead-lettered), with `{ ...args, parentId, total, succeeded, failed }`. */
  readonly onComplete?: { readonly job: AnyDefinition | string; readonly args?: Record<string, unknown>; readonly queueUrl?: string };
  /** Where the children go (default: the parent's queue). */
  readonly queueUrl?: string;
  /** Record each child's own status too (default false: children are counted in the parent either way). */
  readonly track?: boolean;
  /** Children per enqueueMany call, after which the cursor is saved (default 1,000). */
  readonly chunkSize?: number;
}

/** A job made by defineJob(), frozen, with defaults filled in (backoff, priority `normal`, track false). */
export interface JobDefinition<Args extends z.ZodType = z.ZodType> {
  readonly kind: 'sqs-jobs/job';
  readonly name: string;
  readonly args: Args;
  /** The handler, on the args as `args` parsed them: returning completes the job, throwing fails this attempt. */
  readonly handle: (args: z.output<Args>, ctx: JobContext) => Promise<unknown> | unknown;
  /** Abort the handler's signal after this long; the attempt counts as a failure. */
  readonly timeoutMs: number | undefined;
  readonly backoff: BackoffPolicy;
  /** Its tier (default normal): with tier lanes, its jobs go to that lane and higher tiers start first. */
  readonly priority: Priority;
  /** Record every run's status in the job store (as if enqueued with `track: true`). */
  readonly track: boolean;
  /** The event it runs on (`on`), with its subscription's filter policy; undefined for a job that is only enqueued. */
  readonly on: Subscription | undefined;
  /** How often it may start across every worker (through memcached); undefined: as often as there are free slots. */
  readonly rateLimit: RateLimit | undefined;
}

/** A job made by defineJob(), whatever its args schema. */
export type AnyJob = JobDefinition<z.ZodType>;
/** A job of either kind: run one message at a time (defineJob) or in batches (defineBatchJob). */
export type AnyDefinition = AnyJob | AnyBatchJob;

/** Arguments as the caller passes them to enqueue (the schema's input type). */
export type JobArgs<J> = J extends { readonly kind: string; readonly args: infer A extends z.ZodType } ? z.input<A> : never;

const definitionSchema = z
  .object({
    name: jobNameSchema,
    args: zodSchema,
    handle: functionSchema,
    timeoutMs: timeoutMsSchema.optional(),
    backoff: backoffSchema,
    priority: prioritySchema.optional(),
    track: z.boolean().optional(),
    on: onEventSchema.optional(),
    from: functionSchema.optional(),
    rateLimit: rateLimitSchema.optional(),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if (spec.from !== undefined && spec.on === undefined)
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'maps an event payload to args: only with on' });
  });

export interface JobSpec<Args extends z.ZodType> {
  name: string;
  args: Args;
  handle: (args: z.output<Args>, ctx: JobContext) => Promise<unknown> | unknown;
  timeoutMs?: number;
  backoff?: Partial<BackoffPolicy>;
  /** Its tier: `high`, `normal` (default) or `low`; see the producer's `tiers` option. */
  priority?: Priority;
  /** Record every run's status in the job store (default false: only jobs enqueued with `track: true`). */
  track?: boolean;
  /**
   * At most `perSecond` starts per second across every worker (memcached); `burst` may start
   * together after a quiet spell (default 1); `perTenant`: each tenant has the rate to itself.
   * A job over it waits in the worker for its turn (nothing re-sent), or is deferred to it (room full, past half its receives).
   */
  rateLimit?: RateLimitSpec;
  /** Jobs that run on an event are defined with `on` and take the event's payload (EventJobSpec). */
  on?: never;
  from?: never;
}

type OnSpec<E extends AnyEvent> = E | readonly [E, Readonly<Record<string, readonly unknown[]>>];

/** A job that runs on an event: its args are the event's payload (the `args` schema may be given, e.g. a stricter one). */
type EventJobSpec<E extends AnyEvent> = Omit<JobSpec<E['payload']>, 'args' | 'on' | 'from'> & {
  on: OnSpec<E>;
  args?: E['payload'];
};

/**
 * A job that runs on an event with args of its own, made from each event's payload by `from`
 * (the payload checked by the event's schema first, the result by `args`); enqueued directly, it
 * takes its args as any job does.
 */
type MappedEventJobSpec<E extends AnyEvent, Args extends z.ZodType> = Omit<JobSpec<Args>, 'on' | 'from'> & {
  on: OnSpec<E>;
  from: (payload: z.output<E['payload']>) => z.input<Args>;
};

/** Define a job: its name, the zod schema of its arguments, and its handler. */
export function defineJob<E extends AnyEvent, Args extends z.ZodType>(spec: MappedEventJobSpec<E, Args>): JobDefinition<Args>;
export function defineJob<E extends AnyEvent>(spec: EventJobSpec<E>): JobDefinition<E['payload']>;
export function defineJob<Args extends z.ZodType>(spec: JobSpec<Args>): JobDefinition<Args>;
export function defineJob(spec: JobSpec<z.ZodType> | EventJobSpec<AnyEvent> | MappedEventJobSpec<AnyEvent, z.ZodType>): AnyJob {
  const given = (spec as { from?: unknown }).from;
  const from = typeof given === 'function' ? (given as (payload: unknown) => unknown) : undefined;
  const on = spec.on === undefined ? undefined : onEventSchema.safeParse(spec.on).success ? subscriptionOf(spec.on, from) : undefined;
  const withArgs = spec.args === undefined && on !== undefined && from === undefined ? { ...spec, args: on.event.payload } : spec;
  const parsed = parseWith(
    definitionSchema,
    withArgs,
    'job',
    (issues) => new ValidationError('OPTIONS_INVALID', 'invalid job definition', issues),
  );
  return Object.freeze({
    kind: 'sqs-jobs/job',
    name: parsed.name,
    args: withArgs.args as z.ZodType,
    handle: spec.handle as AnyJob['handle'],
    timeoutMs: parsed.timeoutMs,
    backoff: Object.freeze({ ...DEFAULT_BACKOFF, ...parsed.backoff }),
    track: parsed.track ?? false,
    priority: parsed.priority ?? 'normal',
    on,
    rateLimit: parsed.rateLimit === undefined ? undefined : rateLimitOf(parsed.rateLimit),
  });
}

/** Validate args against the job's schema; throws ARGS_INVALID naming each field and rule. */
export function validateArgs<J extends AnyDefinition>(job: J, args: unknown): z.output<J['args']> {
  return parseWith(
    job.args as J['args'],
    args,
    'args',
    (issues) => new ValidationError('ARGS_INVALID', `invalid args for job "${job.name}"`, issues),
  );
}
