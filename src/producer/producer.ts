import { isFifoQueue, parseConfig, resolveQueueUrl, type Env } from '../config/env.js';
import { ConfigError, EnqueueBatchError } from '../core/errors.js';
import type { Spillover } from './spillover.js';
import type { AnyDefinition, JobArgs } from '../core/job.js';
import { JobRegistry } from '../core/job-registry.js';
import { hasMemcached, producerFleet, producerMemcached, producerQueue, producerTopics, sendTracing } from './wiring.js';
import type { Admission, AdmissionState } from './admission/admission.js';
import { checkTenantQueues, destinationOf, type Preparing, prepareMessage } from './prepare.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  checkManyList,
  resolveJob,
  parseEnqueueOptions,
  producerOptionsSchema,
  type EnqueueManyOptions,
  type EnqueueOptions,
  type EnqueueResult,
  type ProducerOptions,
} from './options.js';
import type { JobStore } from '../ports/job-store.js';
import type { StatusStore } from '../ports/status-store.js';
import { resolveJobStore } from '../status/wiring.js';
import { type Sender, sendMany, sendOne } from './sending.js';
import { type KeyPorts, keyPortsOf, sendKeyed } from './keyed.js';
import { refuseKeysInMany } from './fit.js';
import type { SendTracing } from '../ports/tracing.js';
import type { CancelResult } from '../status/cancel.js';
import { JobCanceller } from '../status/cancel-job.js';
import type { AnyEvent, EventPayload } from '../core/event.js';
import type { PublishManyOptions, PublishOptions, PublishResult } from './publish.js';
import { EventPublisher } from './publisher.js';
import { QueueLimit } from './queue-limit.js';
import { brand } from '../core/brand.js';

/** Sends jobs to one queue. Everything is validated before the first network call. */
export class Producer {
  static {
    brand(Producer, 'sqs-jobs/Producer'); // instanceof holds for another copy's Producer too
  }
  readonly queueUrl: string;
  readonly maxMessageBytes: number;
  readonly #closeQueue: () => void; // destroys the SDK client the producer made (none when a queue port or client was given)
  readonly #jobs: JobRegistry;
  /** How its messages are made: its queue, limits and routing. */
  readonly #p: Preparing;
  readonly #admission: Admission | undefined;
  /** Closes admission and the pause check (what the producer shares with the fleet). */
  readonly #closeFleet: () => void = () => {};
  /** The workers' memcached, connected on first use (admission, shared spillover allowances, pauses). */
  readonly #memcached: ReturnType<typeof producerMemcached>;
  readonly #spillover: Spillover | undefined;
  /** Where tracked jobs are recorded as waiting; undefined when no store is configured. */
  readonly #store: JobStore | undefined;
  readonly #ownsStore: boolean;
  readonly #queueLimit: QueueLimit;
  readonly #cancelOptions: Pick<ProducerOptions, 'lock' | 'lockKeyPrefix'>;
  #canceller: JobCanceller | undefined;
  /** Whether cancel() can work here: a job store, and the workers' memcached (or a lock). */
  readonly cancellable: boolean;
  readonly #env: Env;
  readonly #events: EventPublisher; // where `publish` sends events: the topics' ARNs, and the port (made on first publish)
  readonly #sender: Sender; // what sending takes: the parts above
  /** Send spans, when @opentelemetry/api is installed and the `tracing` option is not false. */
  readonly #tracing: SendTracing | undefined;

  constructor(options: ProducerOptions = {}, env: Env = process.env) {
    const o = parseConfig(producerOptionsSchema, options, 'options', 'invalid producer options');
    this.queueUrl = resolveQueueUrl(o.queueUrl, env, 'options.queueUrl');
    this.maxMessageBytes = o.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#jobs = o.jobs instanceof JobRegistry ? o.jobs : new JobRegistry(o.jobs ?? []);
    if (o.lock !== undefined && o.memcached !== undefined)
      throw new ConfigError('invalid producer options: options.lock: give either lock or memcached, not both');
    const fifo = isFifoQueue(this.queueUrl);
    checkTenantQueues(o.tenantQueues, fifo);
    this.#store = resolveJobStore(o.store, env);
    this.#ownsStore = this.#store !== o.store;
    this.#cancelOptions = { lock: o.lock, lockKeyPrefix: o.lockKeyPrefix };
    this.#env = env;
    this.cancellable = this.#store !== undefined && (o.lock !== undefined || hasMemcached(o.memcached, env));
    const { queue, counts, close } = producerQueue(o, env);
    this.#closeQueue = close;
    this.#queueLimit = new QueueLimit(queue, this.queueUrl, this.maxMessageBytes);
    this.#tracing = o.tracing ? sendTracing() : undefined;
    try {
      const topics = producerTopics(o.events, o.endpoint, o.region, this.queueUrl, env);
      this.#events = new EventPublisher(topics, this.maxMessageBytes, this.#tracing);
    } catch (error) {
      this.close();
      throw error;
    }
    this.#memcached = producerMemcached(o, env);
    let fleet: ReturnType<typeof producerFleet>;
    try {
      fleet = producerFleet(o, fifo, this.#memcached, counts, this.#store);
    } catch (error) {
      this.close();
      throw error;
    }
    ({ admission: this.#admission, spillover: this.#spillover, close: this.#closeFleet } = fleet);
    this.#p = {
      queueUrl: this.queueUrl,
      maxMessageBytes: this.maxMessageBytes,
      fifo,
      hasStore: this.#store !== undefined,
      tiers: o.tiers,
      tenantQueues: o.tenantQueues,
      keyed: this.#admission !== undefined,
      maxSqsDelaySeconds: o.maxSqsDelaySeconds,
      keepsTimed: this.#store?.timed !== undefined,
      keepsKeys: this.#store?.keys !== undefined,
    };
    this.#sender = {
      p: this.#p,
      queue,
      queueLimit: this.#queueLimit,
      admission: this.#admission,
      spillover: this.#spillover,
      store: this.#store,
      pauses: fleet.pauses,
    };
  }

  /** The jobs this producer can send. */
  get jobs(): JobRegistry {
    return this.#jobs;
  }

  /** Whether admission is on (the `admission` option): enqueue may throw QueueFullError. */
  get admits(): boolean {
    return this.#admission !== undefined;
  }

  /** What admission sees for a queue (default: the producer's): backlog, drain capacity, mark; undefined without admission or before it sampled there. */
  admissionState(queueUrl: string = this.queueUrl): AdmissionState | undefined {
    return this.#admission?.state(queueUrl);
  }

  /** Where tracked jobs are recorded (the `store` option); undefined when none is configured. */
  get store(): StatusStore | undefined {
    return this.#store;
  }

  /**
   * Validate, encode and send one job. Resolves once SQS has stored the message, or, for a job put
   * off beyond SQS's delay (`runAt`, `delaySeconds` over 900), once the job store keeps it.
   */
  async enqueue<J extends AnyDefinition>(job: J | string, args: JobArgs<J>, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    const definition = resolveJob(this.#jobs, job);
    const opts = parseEnqueueOptions(options, `enqueue options for job "${definition.name}"`);
    const send = this.#tracing?.send(destinationOf(this.#p, definition, opts), definition.name, undefined, opts.tenant);
    try {
      const result = await ((opts.singleton ?? opts.throttle ?? opts.debounce)
        ? sendKeyed(this.#sender, this.#keyPorts, definition, args, opts, send?.trace)
        : sendOne(this.#sender, definition, args, opts, send?.trace));
      send?.sent(result.queueUrl, result);
      const { queueUrl: _, ...answer } = result;
      return answer;
    } catch (error) {
      send?.failed(error);
      throw error;
    }
  }

  /**
   * Check a job as enqueue() would (the job, the options, the args by its schema, the message's
   * size) without sending it: throws the same errors, sends nothing and takes no spillover token.
   */
  check<J extends AnyDefinition>(job: J | string, args: JobArgs<J>, options: EnqueueOptions = {}): void {
    const definition = resolveJob(this.#jobs, job);
    const opts = parseEnqueueOptions(options, `enqueue options for job "${definition.name}"`);
    prepareMessage(this.#p, definition, args, opts, 'args');
    if (opts.tenant !== undefined) this.#spillover?.keyOf(opts.tenant); // a tenantGroup that refuses the tenant throws as enqueue would
  }

  /**
   * Send many jobs with SendMessageBatch: split by 10 entries and by total bytes, entries SQS
   * rejects for a transient reason are retried, and anything still unsent is reported in one
   * EnqueueBatchError that lists exactly which entries (by index and job id) did not go.
   */
  async enqueueMany<J extends AnyDefinition>(
    job: J | string,
    argsList: readonly JobArgs<J>[],
    options: EnqueueManyOptions = {},
  ): Promise<EnqueueResult[]> {
    const definition = resolveJob(this.#jobs, job);
    const { jobIds, ...shared } = options;
    const opts = parseEnqueueOptions(shared, `enqueueMany options for job "${definition.name}"`);
    refuseKeysInMany(definition.name, opts);
    checkManyList(definition.name, argsList, jobIds);
    if (argsList.length === 0) return [];
    const send = this.#tracing?.send(destinationOf(this.#p, definition, opts), definition.name, argsList.length, opts.tenant);
    try {
      const results = await sendMany(this.#sender, definition, argsList, opts, jobIds, send?.trace);
      send?.sent(undefined, undefined);
      return results;
    } catch (error) {
      send?.failed(error, error instanceof EnqueueBatchError ? error.failed.length : undefined);
      throw error;
    }
  }

  /** What a keyed enqueue asks of the job store (checkOptionsFit saw it), the workers' lock and cancel. */
  #keyPorts = (): KeyPorts => keyPortsOf(this.#store!, this.#cancelOptions.lock ?? this.#memcached.get(), (id) => this.cancel(id));

  /** Cancel a tracked job (see CancelResult): recorded in this producer's job store, marked in the workers' memcached. */
  async cancel(jobId: string): Promise<CancelResult> {
    // On the lock given, else on the memcached client admission and spillover use (its TLS settings read once).
    const { lock, lockKeyPrefix } = this.#cancelOptions;
    this.#canceller ??= new JobCanceller({ lock: lock ?? this.#memcached.get(), lockKeyPrefix }, this.#env, { store: this.#store });
    return this.#canceller.cancel(jobId);
  }

  /**
   * Publish an event (defineEvent) to its SNS topic: every job that subscribes runs once, from its
   * own queue. The payload is checked by the event's schema and sized as enqueue does (nothing is
   * sent when it is wrong). `id` (default: a new one) makes it idempotent: a publish with the same
   * id runs each subscriber once. `attributes` are for subscriptions' filter policies.
   */
  publish<E extends AnyEvent>(event: E, payload: EventPayload<E>, options: PublishOptions = {}): Promise<PublishResult> {
    return this.#events.publish(event, payload, options);
  }

  /** Publish many payloads of one event in PublishBatch calls (see EventPublisher.publishMany): all checked before any is sent. */
  publishMany<E extends AnyEvent>(
    event: E,
    payloads: readonly EventPayload<E>[],
    options: PublishManyOptions = {},
  ): Promise<PublishResult[]> {
    return this.#events.publishMany(event, payloads, options);
  }

  /** Release the SDK clients' sockets (only those this producer created), the job store's and memcached's. */
  close(): void {
    this.#events?.close();
    this.#canceller?.close();
    this.#closeFleet();
    this.#memcached?.close();
    this.#closeQueue();
    if (this.#ownsStore) this.#store?.close();
  }
}

/**
 * A Producer for one queue, its options checked before any call: unset ones are read from `env` (SQS_JOBS_QUEUE_URL,
 * SQS_JOBS_ENDPOINT, AWS_REGION, SQS_JOBS_JOB_TABLE, SQS_JOBS_MEMCACHED). Call `close()` when done to release its clients.
 */
export function createProducer(options: ProducerOptions = {}, env: Env = process.env): Producer {
  return new Producer(options, env);
}
