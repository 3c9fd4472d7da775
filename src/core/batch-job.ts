import type { Logger } from 'pino';
import { z } from 'zod';
import { type RateLimit, type RateLimitSpec, rateLimitOf, rateLimitSchema } from './rate-limit.js';
import { type Priority, prioritySchema } from './priority.js';
import { ValidationError } from './errors.js';
import {
  backoffSchema,
  DEFAULT_BACKOFF,
  functionSchema,
  jobNameSchema,
  timeoutMsSchema,
  zodSchema,
  type BackoffPolicy,
} from './definition-rules.js';
import { parseWith } from './validation.js';

/**
 * A batch job: its items are ordinary messages (enqueue is unchanged), and the worker hands them
 * to the handler many at a time, grouped by key. A batch is flushed when it holds `maxSize` items,
 * when its oldest item has been held `maxWaitMs`, or early, once it holds `minSize` and the queue
 * has nothing more to give at once. Held items stay invisible under the heartbeat: the worker's
 * memory holds the batch, SQS keeps the durable copy.
 */
export interface BatchItem<Args> {
  readonly jobId: string;
  readonly args: Args;
  /** This item's attempt: each item keeps its own receive count. */
  readonly attempt: number;
  readonly messageId: string;
  readonly tenant: string | undefined;
  readonly enqueuedAt: Date;
}

interface BatchContext {
  readonly jobName: string;
  /** The key the batch's items share (`key(args)`, or the job name). */
  readonly key: string;
  /** Aborted when the batch times out or the worker's shutdown deadline passes. */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/**
 * What the handler answers: the items that failed, each with its error. Items not named
 * succeeded. A failed item is retried on its own (backoff, then the DLQ when its receives run
 * out); with an UnrecoverableError it goes to the DLQ at once. Throwing fails every item.
 */
export interface BatchResult {
  readonly failed?: readonly { readonly jobId: string; readonly error: unknown }[];
}

/** What a batch handler may answer: nothing (every item succeeded), or the items that failed. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler written `async (items) => { await bulk(items) }` returns Promise<void>
export type BatchAnswer = BatchResult | undefined | void;

/** A batch job made by defineBatchJob(), frozen, with defaults filled in (`key`: the job name; `minSize`: `maxSize`). */
export interface BatchJobDefinition<Args extends z.ZodType = z.ZodType> {
  readonly kind: 'sqs-jobs/batch-job';
  readonly name: string;
  readonly args: Args;
  /** The batch an item joins; items of one key are flushed together. */
  readonly key: (args: z.output<Args>) => string;
  readonly minSize: number;
  readonly maxSize: number;
  readonly maxWaitMs: number;
  /** One flush of a key at a time across the fleet (a memcached key per job and key). */
  readonly exclusive: boolean;
  /** How often its handler may be called across every worker (one slot per call, through memcached); undefined: no limit. */
  readonly rateLimit: RateLimit | undefined;
  /**
   * The handler: gets up to `maxSize` items of one key, in the order received. Answer nothing when
   * every item succeeded, or `{ failed }` for those that did not; throwing fails every item.
   */
  readonly handle: (items: BatchItem<z.output<Args>>[], ctx: BatchContext) => Promise<BatchAnswer> | BatchAnswer;
  readonly timeoutMs: number | undefined;
  readonly backoff: BackoffPolicy;
  /** Its tier (default normal): with tier lanes, its jobs go to that lane and higher tiers start first. */
  readonly priority: Priority;
}

export type AnyBatchJob = BatchJobDefinition<z.ZodType>;

export interface BatchJobSpec<Args extends z.ZodType> {
  name: string;
  args: Args;
  /** Group items by this key (default: one batch per job). Keep the number of keys bounded. */
  key?: (args: z.output<Args>) => string;
  /** Flush early once this many items are held and the queue has no more at once (default: maxSize). */
  minSize?: number;
  maxSize: number;
  /** Flush a batch once its oldest item has been held this long, whatever its size. */
  maxWaitMs: number;
  /** Never flush one key in two places at once (needs memcached; default false). */
  exclusive?: boolean;
  /**
   * At most `perSecond` handler calls per second across every worker (memcached): one slot per
   * call, whatever its size (an API taking many items per request). `perTenant` does not apply: a
   * batch mixes tenants.
   */
  rateLimit?: Omit<RateLimitSpec, 'perTenant'>;
  handle: (items: BatchItem<z.output<Args>>[], ctx: BatchContext) => Promise<BatchAnswer> | BatchAnswer;
  /** Abort the handler's signal after this long; every item of the batch then counts a failed attempt. */
  timeoutMs?: number;
  backoff?: Partial<BackoffPolicy>;
  /** Its tier: `high`, `normal` (default) or `low`; see the producer's `tiers` option. */
  priority?: Priority;
}

/** The largest batch: a handler call holds this many messages, each under the heartbeat. */
const MAX_BATCH_SIZE = 10_000;

const batchSpecSchema = z
  .object({
    name: jobNameSchema,
    args: zodSchema,
    key: functionSchema.optional(),
    minSize: z.number().int().min(1).max(MAX_BATCH_SIZE).optional(),
    maxSize: z.number().int().min(1).max(MAX_BATCH_SIZE, `must be at most ${MAX_BATCH_SIZE}`),
    maxWaitMs: z.number().int().min(0).max(900_000, 'must be at most 15 minutes'),
    exclusive: z.boolean().optional(),
    rateLimit: rateLimitSchema
      .refine((r) => r.perTenant !== true, { message: 'a batch mixes tenants: its rate is per handler call', path: ['perTenant'] })
      .optional(),
    handle: functionSchema,
    timeoutMs: timeoutMsSchema.optional(),
    backoff: backoffSchema,
    priority: prioritySchema.optional(),
  })
  .strict()
  .refine((s) => s.minSize === undefined || s.minSize <= s.maxSize, { message: 'must not be above maxSize', path: ['minSize'] });

/** Define a batch job: its name, the zod schema of one item's arguments, how items are grouped and flushed, and its handler. */
export function defineBatchJob<Args extends z.ZodType>(spec: BatchJobSpec<Args>): BatchJobDefinition<Args> {
  const parsed = parseWith(
    batchSpecSchema,
    spec,
    'batchJob',
    (issues) => new ValidationError('OPTIONS_INVALID', 'invalid batch job definition', issues),
  );
  const name = parsed.name;
  return Object.freeze({
    kind: 'sqs-jobs/batch-job',
    name,
    args: spec.args,
    key: spec.key ?? (() => name),
    minSize: parsed.minSize ?? parsed.maxSize,
    maxSize: parsed.maxSize,
    maxWaitMs: parsed.maxWaitMs,
    exclusive: parsed.exclusive ?? false,
    rateLimit: parsed.rateLimit === undefined ? undefined : rateLimitOf(parsed.rateLimit),
    handle: spec.handle,
    timeoutMs: parsed.timeoutMs,
    backoff: Object.freeze({ ...DEFAULT_BACKOFF, ...parsed.backoff }),
    priority: parsed.priority ?? 'normal',
  });
}

export function isBatchJob(value: unknown): value is AnyBatchJob {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'sqs-jobs/batch-job';
}
