import { brand } from './brand.js';
import { SqsJobsError, UnknownJobError } from './errors.js';
import type { AnyDefinition } from './job.js';

/** A job made by defineJob() or defineBatchJob(). */
export function isDefinition(value: unknown): value is AnyDefinition {
  const kind = typeof value === 'object' && value !== null ? (value as { kind?: unknown }).kind : undefined;
  return kind === 'sqs-jobs/job' || kind === 'sqs-jobs/batch-job';
}

/** The jobs a producer may send and a worker may run. Refuses two jobs with one name. */
export class JobRegistry {
  static {
    brand(JobRegistry, 'sqs-jobs/JobRegistry'); // instanceof holds for another copy's JobRegistry too
  }
  readonly #jobs = new Map<string, AnyDefinition>();
  constructor(jobs: Iterable<AnyDefinition> = []) {
    for (const job of jobs) this.register(job);
  }
  /** Add a job; the same one again is a no-op. Throws SqsJobsError `JOB_DUPLICATE_NAME`, or `JOB_DEFINITION_INVALID` for a non-job. */
  register(job: AnyDefinition): this {
    if (!isDefinition(job)) {
      throw new SqsJobsError('JOB_DEFINITION_INVALID', 'register() takes a job made by defineJob() or defineBatchJob()');
    }
    const existing = this.#jobs.get(job.name);
    if (existing !== undefined && existing !== job) {
      throw new SqsJobsError('JOB_DUPLICATE_NAME', `a job named "${job.name}" is already registered; job names must be unique`);
    }
    this.#jobs.set(job.name, job);
    return this;
  }
  /** The job named `name`, or undefined. */
  find(name: string): AnyDefinition | undefined {
    return this.#jobs.get(name);
  }
  /** The job named `name`; throws UnknownJobError (`JOB_UNKNOWN`, listing the known names) when there is none. */
  get(name: string): AnyDefinition {
    const job = this.#jobs.get(name);
    if (job === undefined) throw new UnknownJobError(name, this.names());
    return job;
  }
  /** The registered job names, sorted. */
  names(): string[] {
    return [...this.#jobs.keys()].sort();
  }
  get size(): number {
    return this.#jobs.size;
  }
}
