import { z } from 'zod';
import { SQS_MAX_HOLD_MS } from './sqs-limits.js';

/* What both kinds of job definition (defineJob, defineBatchJob) are checked against. */

/** Exponential backoff: delay = min(capMs, baseMs * factor^(attempt-1)), with ±jitter. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly factor: number;
  readonly capMs: number;
  /** Fraction of the delay that is random, 0..1. */
  readonly jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = Object.freeze({ baseMs: 1_000, factor: 5, capMs: 900_000, jitter: 0.2 });

export const JOB_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,79}$/;

/** A job's `backoff` option, as written (defaults fill the rest). */
export const backoffSchema = z
  .object({
    baseMs: z.number().int().min(0).max(SQS_MAX_HOLD_MS).optional(),
    factor: z.number().min(1).max(100).optional(),
    capMs: z.number().int().min(0).max(SQS_MAX_HOLD_MS, 'must be at most 12 hours (SQS visibility limit)').optional(),
    jitter: z.number().min(0).max(1).optional(),
  })
  .strict()
  .optional();

export const jobNameSchema = z
  .string()
  .regex(JOB_NAME_PATTERN, 'must be 1-80 characters of letters, digits, _ . : - and start with a letter or digit');

export const zodSchema = z.custom<z.ZodType>((v) => v instanceof z.ZodType, { error: (issue) => notZodSchema(issue.input) });

/** Why `v` is not a schema sqs-jobs can use: a zod 3 one, a zod/mini one, or not a schema at all. */
function notZodSchema(v: unknown): string {
  if (typeof v === 'object' && v !== null) {
    const traits = (v as { _zod?: { traits?: unknown } })._zod?.traits;
    if (traits instanceof Set && traits.has('ZodMiniType')) return "is a zod/mini schema: define it with `import { z } from 'zod'`";
    if ('_zod' in v)
      return 'is a zod 4 schema sqs-jobs cannot read: define it with `import { z } from "zod"` (`npm ls zod` shows the copies)';
    if ('_def' in v && typeof (v as { safeParse?: unknown }).safeParse === 'function')
      return 'is a zod 3 schema: sqs-jobs needs zod 4 (`npm i zod@^4`)';
  }
  return 'must be a zod schema';
}

export const functionSchema = z.custom<(...a: unknown[]) => unknown>((v) => typeof v === 'function', 'must be a function');

/** Handler timeouts: SQS cannot keep a message invisible longer than 12 hours. */
export const timeoutMsSchema = z.number().int().positive().max(SQS_MAX_HOLD_MS, 'must be at most 12 hours (SQS visibility limit)');
