import { z } from 'zod';
import type { DeadLetter } from './dlq.js';

/**
 * Which dead letters an operator means: every field given must match (none given: all of them).
 * The same filter narrows `dlq list`, `dlq replay`, `dlq purge` and the dashboard's dead letters.
 */
export interface DeadLetterFilter {
  /** The job's name, exactly. */
  readonly job?: string | undefined;
  /** The job id, exactly. */
  readonly id?: string | undefined;
  /** The reason code, exactly (`handler-failed`, `not-an-envelope`, `redrive`…). */
  readonly reason?: string | undefined;
  /** The tenant, exactly. */
  readonly tenant?: string | undefined;
  /** Text the error contains (case-insensitive). */
  readonly error?: string | undefined;
  /** Dead-lettered at least this many seconds ago. */
  readonly olderThanSeconds?: number | undefined;
  /** Dead-lettered at most this many seconds ago. */
  readonly newerThanSeconds?: number | undefined;
}

const text = z.string().min(1, 'must not be empty').max(1_000, 'must be at most 1000 characters');
const seconds = z.number().int('must be a whole number of seconds').min(0, 'must be >= 0').max(1_209_600, 'must be <= 1209600 (14 days)');

export const deadLetterFilterSchema = z
  .object({
    job: text.optional(),
    id: text.optional(),
    reason: text.optional(),
    tenant: text.optional(),
    error: text.optional(),
    olderThanSeconds: seconds.optional(),
    newerThanSeconds: seconds.optional(),
  })
  .strict();

/** The filter's fields that are set, in a stable order (for showing and for URLs). */
export const FILTER_FIELDS = ['job', 'id', 'reason', 'tenant', 'error', 'olderThanSeconds', 'newerThanSeconds'] as const;

/** Whether any field of the filter is set. */
export function isFiltered(f: DeadLetterFilter): boolean {
  return FILTER_FIELDS.some((k) => f[k] !== undefined);
}

/**
 * Whether `letter` is one of those the filter means, at `now`. Its age is from when it was
 * dead-lettered (our `sqsjobs-dlq-at`), else from when it was sent (SQS's redrive keeps that).
 */
export function matchesFilter(letter: DeadLetter, f: DeadLetterFilter, now: number = Date.now()): boolean {
  if (f.job !== undefined && letter.jobName !== f.job) return false;
  if (f.id !== undefined && letter.jobId !== f.id) return false;
  if (f.reason !== undefined && letter.reason !== f.reason) return false;
  if (f.tenant !== undefined && letter.tenant !== f.tenant) return false;
  if (f.error !== undefined && !(letter.error ?? '').toLowerCase().includes(f.error.toLowerCase())) return false;
  if (f.olderThanSeconds === undefined && f.newerThanSeconds === undefined) return true;
  const at = Date.parse(letter.deadLetteredAt ?? letter.sentAt);
  if (!Number.isFinite(at)) return false;
  const age = (now - at) / 1000;
  if (f.olderThanSeconds !== undefined && age < f.olderThanSeconds) return false;
  if (f.newerThanSeconds !== undefined && age > f.newerThanSeconds) return false;
  return true;
}

/** The filter in words, e.g. `job=send-email, reason=handler-failed`; `everything` when none is set. */
export function describeFilter(f: DeadLetterFilter): string {
  const parts = FILTER_FIELDS.filter((k) => f[k] !== undefined).map((k) => `${k}=${String(f[k])}`);
  return parts.length === 0 ? 'everything' : parts.join(', ');
}
