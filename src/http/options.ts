import { z } from 'zod';
import { parseConfig } from '../config/env.js';
import type { AnyDefinition } from '../core/job.js';
import { isDefinition, JobRegistry } from '../core/job-registry.js';
import { ConfigError } from '../core/errors.js';
import type { EnqueueOptions } from '../producer/options.js';
import { Producer } from '../producer/producer.js';

/**
 * Options of createJobsApi: the producer it enqueues through, the jobs it offers, where it is mounted, the body
 * limit and per-request enqueue options. It reads no environment variable: queue and job store are the producer's.
 */
export interface ApiOptions {
  /** The producer that sends the jobs (and whose job store, if any, keeps their status). */
  readonly producer: Producer;
  /** The jobs that may be enqueued over HTTP. Default: every job the producer was given (its `jobs` option). */
  readonly jobs?: readonly AnyDefinition[];
  /** Where the API is mounted, e.g. `/api` (no trailing slash). Default: `` (the root). */
  readonly basePath?: string;
  /** Bodies over this many bytes are refused with 413 before they are read whole. Default: twice the producer's maxMessageBytes. */
  readonly maxBodyBytes?: number;
  /** `Retry-After` (seconds) when SQS or the job store does not answer. Default 5. */
  readonly retryAfterSeconds?: number;
  /**
   * Enqueue options from the request, decided by the host (a tenant from the caller's identity, a
   * delay): never read from the client's own say-so unless the host chooses to.
   */
  readonly enqueueOptions?: (request: Request, job: AnyDefinition) => EnqueueOptions | Promise<EnqueueOptions>;
}

const schema = z
  .object({
    producer: z.instanceof(Producer, { error: 'must be a Producer (createProducer())' }),
    jobs: z.array(z.custom<AnyDefinition>(isDefinition, 'must be a job made by defineJob() or defineBatchJob()')).optional(),
    basePath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*$/, 'must be empty or a path like /api, with no trailing slash')
      .default(''),
    maxBodyBytes: z.number().int().min(1, 'must be >= 1').optional(),
    retryAfterSeconds: z.number().int().min(1, 'must be >= 1').max(3_600, 'must be <= 3600').default(5),
    enqueueOptions: z.custom<ApiOptions['enqueueOptions']>((v) => typeof v === 'function', 'must be a function').optional(),
  })
  .strict();

type ApiSettings = Omit<z.output<typeof schema>, 'jobs'> & { readonly jobs: readonly AnyDefinition[] };

/** The options, checked once: the jobs given (unique names), else the producer's; at least one. */
export function parseApiOptions(options: ApiOptions): ApiSettings {
  const o = parseConfig(schema, options, 'options', 'invalid HTTP API options');
  const registry = o.jobs === undefined ? o.producer.jobs : new JobRegistry(o.jobs);
  const jobs = registry.names().map((n) => registry.get(n));
  if (jobs.length === 0) {
    throw new ConfigError('invalid HTTP API options: options.jobs: no jobs to offer (pass jobs, or give the producer its jobs option)');
  }
  return { ...o, jobs };
}
