import { ConfigError, toError } from '../core/errors.js';
import type { Env } from '../config/env.js';
import type { JobStatus, StatusStore } from '../ports/status-store.js';
import { type StoreOption, storeOptionSchema } from './store.js';
import { resolveJobStore } from './wiring.js';
import { parseConfig } from '../config/env.js';

/** The store could not be asked: the job's state is not known (never a guess). */
interface UnknownStatus {
  readonly jobId: string;
  readonly state: 'unknown';
  readonly error: string;
}

/** A job's status as the store holds it, or `{ state: 'unknown', error }` when the store could not be asked. */
export type JobView = JobStatus | UnknownStatus;

/** Reads job status from the job store; one client for many reads. */
export class JobStatusReader {
  readonly #store: StatusStore;
  /** The store was made here (from settings), not handed in: close() closes it. */
  readonly #ownsStore: boolean;

  constructor(store: StoreOption | undefined, env: Env = process.env) {
    const option = parseConfig(storeOptionSchema, store, 'store', 'invalid job store');
    const resolved = resolveJobStore(option, env);
    if (resolved === undefined) throw new ConfigError('no job store: pass { table } or set SQS_JOBS_JOB_TABLE');
    this.#store = resolved;
    this.#ownsStore = resolved !== option;
  }

  /** The job's status; undefined when the store has no record of it (never tracked, or expired); `unknown` when the store cannot answer. */
  async get(jobId: string): Promise<JobView | undefined> {
    try {
      return await this.#store.get(jobId);
    } catch (error) {
      const e = toError(error);
      return { jobId, state: 'unknown', error: `${e.name}: ${e.message}` };
    }
  }

  /** Close the store's client, when this reader made it (a store handed in stays open). */
  close(): void {
    if (this.#ownsStore) this.#store.close();
  }
}

let defaultReader: JobStatusReader | undefined;

/**
 * A job's status, from the job store named by SQS_JOBS_JOB_TABLE (or `store`, read once with a
 * client of its own). Resolves `{ state: 'unknown', error }` when the store cannot be reached,
 * and undefined when it has no record of the job.
 */
export async function getJob(jobId: string, store?: StoreOption, env: Env = process.env): Promise<JobView | undefined> {
  if (store !== undefined) {
    const reader = new JobStatusReader(store, env);
    try {
      return await reader.get(jobId);
    } finally {
      reader.close();
    }
  }
  defaultReader ??= new JobStatusReader(undefined, env);
  return defaultReader.get(jobId);
}
