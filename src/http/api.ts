import { jobIdSchema } from '../core/envelope.js';
import { SqsJobsError, toError } from '../core/errors.js';
import type { AnyDefinition } from '../core/job.js';
import type { StatusStore } from '../ports/status-store.js';
import type { CancelResult } from '../status/cancel.js';
import type { EnqueueOptions } from '../producer/options.js';
import type { Producer } from '../producer/producer.js';
import { checkedArgs } from '../producer/args.js';
import { readJsonBody } from './body.js';
import type { Mountable } from './mountable.js';
import { type ApiOptions, parseApiOptions } from './options.js';
import { openApiDocument } from './openapi.js';
import { enqueueProblem, json, problem } from './responses.js';
import { allowHeader, type Offer, placeOf, servedAt } from './routes.js';
import { statusBody } from './status-view.js';

/**
 * The HTTP API in front of a producer, on the web-standard `Request -> Response` signature (mount
 * it with the adapters in sqs-jobs/http, or hand it to any server that speaks fetch):
 *
 *   POST {basePath}/jobs/{name}  the body is the job's args -> 202 { jobId, statusUrl } + Location
 *   GET  {basePath}/jobs/{id}    the job's status (needs the job store)
 *   DELETE {basePath}/jobs/{id}  cancel the job (needs the job store and the workers' memcached)
 *   GET  {basePath}/openapi.json an OpenAPI 3.1 document made from the jobs' zod schemas
 *
 * Only the jobs given (default: every job the producer knows) can be enqueued; any other name is a
 * 404 that says nothing of what exists. Authentication is the host's: put it in front.
 */
export class JobsApi implements Mountable {
  readonly basePath: string;
  readonly #producer: Producer;
  readonly #jobs: ReadonlyMap<string, AnyDefinition>;
  readonly #store: StatusStore | undefined;
  readonly #maxBodyBytes: number;
  readonly #retryAfterSeconds: number;
  readonly #enqueueOptions: ApiOptions['enqueueOptions'];
  readonly #offer: Offer;
  #openapi: string | undefined;

  constructor(options: ApiOptions) {
    const o = parseApiOptions(options);
    this.#producer = o.producer;
    this.basePath = o.basePath;
    this.#jobs = new Map(o.jobs.map((j) => [j.name, j]));
    this.#store = o.producer.store;
    this.#maxBodyBytes = o.maxBodyBytes ?? 2 * o.producer.maxMessageBytes;
    this.#retryAfterSeconds = o.retryAfterSeconds;
    this.#enqueueOptions = o.enqueueOptions;
    const jobs = this.#jobs;
    this.#offer = {
      basePath: this.basePath,
      isJob: (name) => jobs.has(name),
      statusKept: this.#store !== undefined,
      cancellable: o.producer.cancellable,
    };
  }

  /** Fastify route patterns that reach it (fastifyPlugin). */
  get routes(): readonly string[] {
    return [`${this.basePath}/openapi.json`, `${this.basePath}/jobs/*`];
  }

  /** Whether a request for this path is the API's to answer (adapters pass the others on). */
  handles(pathname: string): boolean {
    return pathname === `${this.basePath}/openapi.json` || pathname.startsWith(`${this.basePath}/jobs/`);
  }

  /** The methods served at `pathname` (routes.ts says which): what `Allow` lists, besides OPTIONS. */
  allows(pathname: string): readonly string[] {
    return servedAt(this.#offer, placeOf(this.#offer, pathname));
  }

  /** Answer one request. Never throws: whatever goes wrong is an answer with a problem body. */
  readonly fetch = async (request: Request): Promise<Response> => {
    try {
      return await this.#route(request);
    } catch (error) {
      const e = toError(error);
      return problem(500, 'internal', `the request could not be handled: ${e.name}: ${e.message}`);
    }
  };

  async #route(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    const method = request.method.toUpperCase();
    const place = placeOf(this.#offer, pathname);
    const served = servedAt(this.#offer, place);
    if (place === 'openapi.json' && served.includes(method)) return this.#document();
    if (typeof place === 'object' && served.includes(method)) {
      if (method === 'POST') return this.#enqueue(request, this.#jobs.get(place.segment)!);
      return method === 'DELETE' ? this.#cancel(place.segment) : this.#status(place.segment);
    }
    if (method === 'OPTIONS' && served.length > 0) return new Response(null, { status: 204, headers: { allow: allowHeader(served) } });
    if (typeof place === 'object') {
      // A POST names a job type and a GET a job: say which one is not there.
      if (method === 'POST') return problem(404, 'job-unknown', `no job type "${place.segment}" can be enqueued here`);
      if (!this.#offer.statusKept && (method === 'GET' || method === 'HEAD')) {
        return problem(404, 'status-not-kept', 'job status is not kept here (the producer has no job store)');
      }
    }
    return this.refuse(pathname, method);
  }

  /** The OpenAPI document, made once. HEAD gets the same answer: the server sends its headers only. */
  #document(): Response {
    this.#openapi ??= JSON.stringify(
      openApiDocument(this.#jobs, {
        basePath: this.basePath,
        statusRoute: this.#store !== undefined,
        cancelRoute: this.#producer.cancellable,
        admission: this.#producer.admits,
      }),
    );
    return new Response(this.#openapi, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  }

  /**
   * The answer to a method not served at `pathname`: 405 with `Allow` listing what is (see
   * allows), else 404. Adapters use it for methods a web-standard Request cannot carry (TRACE,
   * CONNECT) and for requests their framework refuses before the API sees them.
   */
  refuse(pathname: string, method: string): Response {
    const served = this.allows(pathname);
    if (served.length === 0) return problem(404, 'not-found', `nothing at ${pathname}`);
    const allow = allowHeader(served);
    return problem(405, 'method-not-allowed', `${method} is not served here; allowed: ${allow}`, { headers: { allow } });
  }

  async #enqueue(request: Request, job: AnyDefinition): Promise<Response> {
    const key = request.headers.get('idempotency-key');
    if (key !== null) {
      const rule = this.#keyRule(key);
      if (rule !== undefined) {
        return problem(422, 'idempotency-key-invalid', `the Idempotency-Key header ${rule}`, {
          errors: [{ field: 'header.Idempotency-Key', rule }],
        });
      }
    }
    const body = await readJsonBody(request, this.#maxBodyBytes);
    if (!body.ok) return problem(body.status, body.slug, body.detail);
    if (key !== null && this.#store !== undefined) {
      // Args first: a replay answers only a request the first one could have been.
      try {
        checkedArgs(job, body.value, 'args');
      } catch (error) {
        return enqueueProblem(error, this.#retryAfterSeconds);
      }
      const earlier = await this.#read(key);
      if (earlier instanceof Response) return earlier;
      if (earlier !== undefined) {
        if (earlier.jobName !== job.name) {
          return problem(409, 'idempotency-key-reused', `the Idempotency-Key "${key}" was used for a job of another type`);
        }
        return this.#accepted(key, 200, { 'idempotent-replayed': 'true' });
      }
    }
    const extra = (await this.#enqueueOptions?.(request, job)) ?? {};
    const options: EnqueueOptions = {
      ...extra,
      ...(key === null ? {} : { jobId: key }),
      ...(this.#store === undefined ? {} : { track: true }),
    };
    try {
      const { jobId, key } = await this.#producer.enqueue(job, body.value as never, options);
      return this.#accepted(jobId, 202, {}, key);
    } catch (error) {
      return enqueueProblem(error, this.#retryAfterSeconds);
    }
  }

  /**
   * Why `key` cannot be a job id here, or undefined. With a job store, not an offered job's name
   * either: its status would be read at that job's own path, where only POST is served.
   */
  #keyRule(key: string): string | undefined {
    const parsed = jobIdSchema.safeParse(key);
    if (!parsed.success) return parsed.error.issues[0]?.message ?? 'is not a valid job id';
    if (this.#store !== undefined && this.#jobs.has(key)) return 'must not be the name of a job offered here';
    return undefined;
  }

  async #status(id: string): Promise<Response> {
    if (!jobIdSchema.safeParse(id).success) return problem(404, 'job-not-found', `no job "${id}"`);
    const status = await this.#read(id);
    if (status instanceof Response) return status;
    if (status === undefined) return problem(404, 'job-not-found', `no job "${id}" is known (never tracked here, or its record expired)`);
    return json(200, statusBody(status));
  }

  /** The stored status, undefined when none, or a 503 answer when the store does not answer. */
  async #read(id: string) {
    try {
      return await this.#store!.get(id);
    } catch (error) {
      const e = toError(error);
      return problem(503, 'store-unavailable', `the job store did not answer: ${e.message}`, {
        headers: { 'retry-after': String(this.#retryAfterSeconds) },
      });
    }
  }

  async #cancel(id: string): Promise<Response> {
    if (!jobIdSchema.safeParse(id).success) return problem(404, 'job-not-found', `no job "${id}"`);
    // Only jobs of the types this API offers: it never acts on (or tells of) any other.
    const seen = await this.#read(id);
    if (seen instanceof Response) return seen;
    if (seen === undefined || !this.#jobs.has(seen.jobName)) {
      return problem(404, 'job-not-found', `no job "${id}" is known (never tracked here, or its record expired)`);
    }
    let result: CancelResult;
    try {
      result = await this.#producer.cancel(id);
    } catch (error) {
      if (!(error instanceof SqsJobsError && (error.code === 'STORE_UNREACHABLE' || error.code === 'LOCK_UNREACHABLE'))) throw error;
      return problem(503, 'cancel-unavailable', `${error.message}; nothing was cancelled`, {
        headers: { 'retry-after': String(this.#retryAfterSeconds) },
      });
    }
    if (result.outcome === 'not-found')
      return problem(404, 'job-not-found', `no job "${id}" is known (never tracked here, or its record expired)`);
    if (result.outcome === 'ended')
      return problem(409, 'job-ended', `job "${id}" has ended already (${result.status.state}): nothing to cancel`);
    return json(202, statusBody(result.status));
  }

  /** The answer to an enqueue: the job id, where its status is read, and with a key (`enqueueOptions`) what the key did. */
  #accepted(jobId: string, status: 200 | 202, headers: Record<string, string> = {}, key?: string): Response {
    const said = key === undefined ? {} : { key };
    if (this.#store === undefined) return json(status, { jobId, ...said }, headers);
    const statusUrl = `${this.basePath}/jobs/${encodeURIComponent(jobId)}`;
    return json(status, { jobId, statusUrl, ...said }, { location: statusUrl, ...headers });
  }
}

/** The HTTP API for `options.producer` (see JobsApi): `fetch(request)` answers a web-standard `Request`; mount it with an adapter. */
export function createJobsApi(options: ApiOptions): JobsApi {
  return new JobsApi(options);
}
