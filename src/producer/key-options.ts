import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';

/*
 * The keys an enqueue may carry (one at most): `singleton`, `throttle` and `debounce`. What each
 * does is in producer/keyed.ts and docs/guide/keys.md; here are their shapes and limits, checked
 * before any call, and the names they are kept under.
 */

/** The longest a job may be put off (`delaySeconds`, `runAt`, a debounce) or a window last: a year. */
export const MAX_DELAY_SECONDS = 365 * 86_400;

const keyText = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'must be at most 256 characters')
  .regex(/^[^\p{Cc}]+$/u, 'must not contain control characters');

const seconds = (min: number, what: string) =>
  z
    .number()
    .int('must be a whole number of seconds')
    .min(min, `must be >= ${min}`)
    .max(MAX_DELAY_SECONDS, `must be <= ${MAX_DELAY_SECONDS} (a year: ${what})`);

export const singletonSchema = z
  .object({
    key: keyText,
    /** A job of the key waiting or running: `skip` sends nothing (default); `replace` cancels a waiting one and sends this one (a running one is never stopped: this one is skipped). */
    mode: z.enum(['skip', 'replace']).default('skip'),
  })
  .strict();

export const throttleSchema = z
  .object({
    key: keyText,
    /** One job of the key is sent per window; the others in it are not sent (they answer the window's job). */
    windowSeconds: seconds(1, 'the longest a window may last'),
  })
  .strict();

export const debounceSchema = z
  .object({
    key: keyText,
    /** The burst's last job runs once this long has passed with no enqueue of the key. */
    delaySeconds: seconds(1, 'the longest a job may be put off'),
    /** ... and never later than this after the burst's first enqueue (default: no bound). */
    maxWaitSeconds: seconds(1, 'the longest a job may be put off').optional(),
  })
  .strict()
  .refine((d) => d.maxWaitSeconds === undefined || d.maxWaitSeconds >= d.delaySeconds, {
    path: ['maxWaitSeconds'],
    message: 'must be >= delaySeconds',
  });

/** The enqueue options' key fields. */
export const keyFields = {
  /** At most one job of this key waiting or running (needs the job store; the job is tracked). */
  singleton: singletonSchema.optional(),
  /** At most one job of this key sent per window (needs the job store). */
  throttle: throttleSchema.optional(),
  /** One run per burst of this key, with the burst's last args, after it went quiet (needs the job store and workers with `schedules`). */
  debounce: debounceSchema.optional(),
};

export type KeyRule = 'singleton' | 'throttle' | 'debounce';
export const KEY_RULES: readonly KeyRule[] = ['singleton', 'throttle', 'debounce'];

/** The store's name for a key: its rule, its job and the key (a job's keys are its own). */
export function keyIdOf(rule: KeyRule, job: string, key: string): string {
  return `${rule}#${job}#${key}`;
}

/**
 * A debounced burst's job id: the key's digest, when the burst began and a few random letters (a
 * job id's rule: letters, digits, `_ . : -`), so that no burst takes the id of one that ran.
 */
export function burstJobId(job: string, key: string, firstMs: number): string {
  const digest = createHash('sha256').update(`${job}\n${key}`).digest('base64url').slice(0, 16);
  return `debounce:${digest}:${firstMs}-${randomBytes(3).toString('hex')}`;
}
