import { z } from 'zod';
import { type Env, implementing, lockKeyPrefixSchema, parseConfig, resolveMemcachedSettings } from '../config/env.js';
import { jobIdSchema } from '../core/envelope.js';
import { ConfigError } from '../core/errors.js';
import { parseWith } from '../core/validation.js';
import { ValidationError } from '../core/errors.js';
import type { JobLock } from '../ports/lock.js';
import type { StatusStore } from '../ports/status-store.js';
import type { TimedJobStore } from '../ports/timed-jobs.js';
import { type CancelResult, cancelWith } from './cancel.js';
import { storeOptionSchema } from './store.js';
import { memcachedLock, resolveJobStore } from './wiring.js';

/** Where a cancel is recorded (the job store) and where workers read it (the dedupe lock's memcached). */
export const cancelOptionsSchema = z
  .object({
    /** The job store: `{ table, endpoint?, region?, ttlDays? }` or a JobStore; default SQS_JOBS_JOB_TABLE. */
    store: storeOptionSchema,
    /** The workers' memcached ([tls://]host:port[,…]); default SQS_JOBS_MEMCACHED (TLS: SQS_JOBS_MEMCACHED_CA, SQS_JOBS_MEMCACHED_SERVERNAME). */
    memcached: z.string().optional(),
    /** Or the lock port itself (a JobLock with `cancel`), e.g. sqs-jobs/testing's MemoryLock. */
    lock: implementing<JobLock>('JobLock with cancel', ['claim', 'extend', 'cancel', 'close']).optional(),
    /** The workers' lockKeyPrefix (default `sqsjobs:`): the mark must be where they look. */
    lockKeyPrefix: lockKeyPrefixSchema,
  })
  .strict();

/**
 * Where cancelJob and JobCanceller record a cancel (the job store, default SQS_JOBS_JOB_TABLE) and
 * mark it for the workers (their memcached, default SQS_JOBS_MEMCACHED, or a lock).
 */
type CancelOptions = z.input<typeof cancelOptionsSchema>;

/** Cancels tracked jobs (see cancelWith); one store client and one memcached client for many cancels. */
export class JobCanceller {
  readonly #store: StatusStore & { readonly timed?: TimedJobStore | undefined };
  readonly #lock: JobLock;
  readonly #close: () => void;

  /** `resolved.store`: the store a producer resolved already (used as is, and left open); else from `options`. */
  constructor(
    options: CancelOptions = {},
    env: Env = process.env,
    resolved?: { readonly store: (StatusStore & { readonly timed?: TimedJobStore | undefined }) | undefined },
  ) {
    const o = parseConfig(cancelOptionsSchema, options, 'options', 'invalid cancel options');
    if (o.lock !== undefined && o.memcached !== undefined) {
      throw new ConfigError('invalid cancel options: options.lock: give either lock or memcached, not both');
    }
    const owned = resolved === undefined ? resolveJobStore(o.store, env) : undefined;
    const given = resolved === undefined ? (owned === o.store ? owned : undefined) : resolved.store;
    const store = given ?? owned;
    if (store === undefined) throw new ConfigError('cancel needs the job store: pass store ({ table }) or set SQS_JOBS_JOB_TABLE');
    const memcached = o.lock === undefined ? resolveMemcachedSettings(o.memcached, env, 'options.memcached') : undefined;
    const lock = o.lock ?? (memcached === undefined ? undefined : memcachedLock(memcached, o.lockKeyPrefix));
    if (lock === undefined) {
      if (store !== given) store.close();
      throw new ConfigError('cancel needs the memcached the workers use: pass memcached (host:port) or set SQS_JOBS_MEMCACHED');
    }
    this.#store = store;
    this.#lock = lock;
    this.#close = () => {
      if (store !== given) store.close();
      if (lock !== o.lock) lock.close();
    };
  }

  /** Cancel the job `jobId` (see CancelResult). */
  async cancel(jobId: string): Promise<CancelResult> {
    const id = parseWith(jobIdSchema, jobId, 'jobId', (issues) => new ValidationError('OPTIONS_INVALID', 'cancel', issues));
    return cancelWith({ store: this.#store, lock: this.#lock }, id);
  }

  /** Close the clients made here (a store or lock handed in stays open). */
  close(): void {
    this.#close();
  }
}

/**
 * Cancel a tracked job, with the job store named by SQS_JOBS_JOB_TABLE and the memcached named by
 * SQS_JOBS_MEMCACHED (or `options`), on clients made for the call and closed after it (a script
 * that cancels and ends does end). For many cancels, keep a JobCanceller or a producer. See CancelResult.
 */
export async function cancelJob(jobId: string, options: CancelOptions = {}, env: Env = process.env): Promise<CancelResult> {
  const canceller = new JobCanceller(options, env);
  try {
    return await canceller.cancel(jobId);
  } finally {
    canceller.close();
  }
}
