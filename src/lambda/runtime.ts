import type { Env } from '../config/env.js';
import { createLogger } from '../config/log.js';
import { ConfigError, toError } from '../core/errors.js';
import { EventSource } from '../core/events.js';
import type { WorkerEvents } from '../core/job-events.js';
import { resolveWorkerConfig, type WorkerConfig } from '../worker/config.js';
import { closingSteps } from '../worker/lifecycle.js';
import type { WorkerContext } from '../worker/context.js';
import type { Acts } from '../worker/fate/acts.js';
import { type QueueState, queueState, resolveDeadLetterQueue } from '../worker/queue-state.js';
import { Walks } from '../worker/walks.js';
import { buildContext } from '../worker/wiring.js';
import type { LambdaContext, SqsBatchResponse, SqsEvent } from './event.js';
import { type InvocationHost, invoke } from './invocation.js';
import { type LambdaHandlerOptions, lambdaWorkerOptions } from './options.js';
import { RecordsQueue } from './records.js';
import { queuePortFor, withDefaultLock } from './wiring.js';

/** How often a warm container reads the pauses again, at most: once a second, as a worker does. */
const PAUSES_REREAD_MS = 1_000;

/**
 * What one Lambda container keeps across invocations: the worker's context (its clients, lock,
 * job store, metrics), the walks every record takes, and its queues' DLQs, read on the first
 * invocation. Each invocation feeds its records to the same walks a worker feeds from its receive
 * loops (invocation.ts); nothing is held between invocations.
 */
export class LambdaRuntime extends EventSource<WorkerEvents> implements InvocationHost {
  readonly config: WorkerConfig;
  readonly ctx: WorkerContext;
  readonly acts: Acts;
  readonly walks: Walks;
  readonly records: RecordsQueue;
  readonly queues: readonly QueueState[];
  readonly deadlineMarginMs: number;
  /** The current invocation's deadline (ms since the epoch): nothing is held past it. */
  holdUntil = 0;
  #ready: Promise<void> | undefined;
  #pausesReadAt = 0;
  #warnedTimeout = false;
  readonly #destroyClient: () => void;

  constructor(options: LambdaHandlerOptions, env: Env) {
    const { worker, deadlineMarginMs } = lambdaWorkerOptions(options, env);
    const given = withDefaultLock(resolveWorkerConfig(worker, env), env);
    const log = given.logger ?? createLogger(env);
    super((error, event) => log.error({ err: error, event }, 'an event listener threw; the handler goes on'));
    const { queue, destroy } = queuePortFor(given, env);
    this.#destroyClient = destroy;
    this.records = new RecordsQueue(queue);
    this.config = Object.freeze({ ...given, queue: this.records });
    this.deadlineMarginMs = deadlineMarginMs;
    this.queues = this.config.queues.map(queueState);
    const onError = (where: string, error: unknown) => {
      const e = toError(error);
      log.warn({ err: e, where }, `${where} failed`);
      this.events.emit('error', e);
    };
    const { ctx, acts } = buildContext(this.config, env, log, this.events, this.queues, onError);
    this.ctx = ctx;
    this.acts = acts;
    refuseWhatNeedsMemcached(this.config, ctx);
    ctx.metrics?.attach(this);
    // No room to wait in (a job at its cap, rate limit or pause is re-sent), nothing held past its
    // walk, and no FIFO wait held past the invocation's deadline (handed back for as long instead).
    this.walks = new Walks(ctx, acts, this.queues, { freeRoom: 0, holdUntil: () => this.holdUntil });
  }

  /** One invocation: its records walk, and the answer names those not done. */
  async invoke(event: SqsEvent, context: LambdaContext): Promise<SqsBatchResponse> {
    this.#ready ??= this.#start().catch((error: unknown) => {
      this.#ready = undefined; // the next invocation tries again
      throw error;
    });
    await this.#ready;
    const pauses = this.ctx.pauses;
    if (pauses !== undefined && Date.now() - this.#pausesReadAt >= PAUSES_REREAD_MS) {
      this.#pausesReadAt = Date.now();
      await pauses.refresh();
    }
    const remaining = context.getRemainingTimeInMillis();
    if (!this.#warnedTimeout && remaining > this.config.visibilityTimeoutSeconds * 1000) {
      this.#warnedTimeout = true;
      this.ctx.report.log.warn(
        { remainingMs: remaining, visibilityTimeoutSeconds: this.config.visibilityTimeoutSeconds },
        "the function's timeout is longer than visibilityTimeoutSeconds: a record may come back while its job runs, and the dedupe lock lapses before the job ends; set the queue's visibility timeout (and this option) above the function's timeout",
      );
    }
    return invoke(this, event, remaining);
  }

  /**
   * Let go of what the container holds (clients, the lock, the job store, timers), for a test or a
   * local script that must exit; Lambda never calls it. Call it between invocations.
   */
  async close(): Promise<void> {
    const steps: (readonly [string, () => unknown])[] = [
      ['stop permit polls', () => this.walks.room.close()],
      ['stop watching pauses', () => this.ctx.pauses?.close()],
      ...closingSteps(this.ctx, this.acts),
      ['close the SQS client', () => this.#destroyClient()],
    ];
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (error) {
        this.ctx.report.onError(`close: ${name}`, error);
      }
    }
  }

  /** The first invocation: each queue's DLQ (a queue without one is refused), and the pauses in force. */
  async #start(): Promise<void> {
    for (const q of this.queues) await resolveDeadLetterQueue(this.ctx.sqs, q);
    if (this.ctx.pauses !== undefined) {
      await this.ctx.pauses.start();
      this.#pausesReadAt = Date.now();
    }
  }
}

/**
 * Tenant caps, rate limits and exclusive batch jobs are counted fleet-wide in memcached (or the
 * permits and rateLimits options). A worker without them warns and runs uncounted; on Lambda,
 * where scaling out is the mapping's, that would be silent: refused, with what to do.
 */
function refuseWhatNeedsMemcached(c: WorkerConfig, ctx: WorkerContext): void {
  const needs = 'on Lambda this needs memcached (option memcached or SQS_JOBS_MEMCACHED';
  if (Object.keys(c.tenantCaps).length > 0 && ctx.permits === undefined)
    throw new ConfigError(`invalid Lambda handler options: options.tenantCaps: ${needs}, or the permits option)`);
  const limited = c.jobs.names().filter((name) => c.jobs.get(name).rateLimit !== undefined);
  if (limited.length > 0 && ctx.rates === undefined)
    throw new ConfigError(
      `invalid Lambda handler options: jobs ${limited.join(', ')} have a rateLimit: ${needs}, or the rateLimits option)`,
    );
  const exclusive = c.jobs.names().filter((name) => {
    const job = c.jobs.get(name);
    return job.kind === 'sqs-jobs/batch-job' && job.exclusive;
  });
  if (exclusive.length > 0 && ctx.permits === undefined)
    throw new ConfigError(
      `invalid Lambda handler options: batch jobs ${exclusive.join(', ')} are exclusive: ${needs}, or the permits option)`,
    );
}
