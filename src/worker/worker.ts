import type { SQSClient } from '@aws-sdk/client-sqs';
import type { Logger } from 'pino';
import { createSqsClient } from '../aws/clients.js';
import { isFifoQueue, queueNameOf, type Env } from '../config.js';
import { NoLock, type JobLock } from '../dedupe/lock.js';
import { MemcachedLock } from '../dedupe/memcached-lock.js';
import { SafeEmitter } from '../events.js';
import { ConfigError, SqsJobsError, toError } from '../errors.js';
import { createLogger } from '../log.js';
import { createMetricsRecorder, type MetricsRecorder } from '../metrics/index.js';
import { queueUrlFromArn, readRedrivePolicy } from '../queues.js';
import { DeleteBatcher } from './acks.js';
import type { WorkerEvents } from './events.js';
import { Heartbeat, type Lease } from './heartbeat.js';
import { resolveWorkerConfig, type QueueConfig, type WorkerConfig, type WorkerOptions } from './options.js';
import { describeMessage, runJob, type Outcome, type RunDeps } from './run-job.js';
import { Scheduler, type ScheduledQueue } from './scheduler.js';
import { releaseUnstarted, settle, type SettleDeps } from './settle.js';
import { SqsQueuePort, type QueuePort } from './sqs-port.js';
import { ReceiveCapacity } from './capacity.js';

/** Outcomes after which a FIFO message comes back to its queue, so its group's later messages must wait for it. */
const BLOCKS_GROUP: ReadonlySet<Outcome['kind']> = new Set(['retry', 'release', 'lost']);

interface QueueState extends ScheduledQueue {
  readonly config: QueueConfig;
  /** What runJob needs for this queue; built once the DLQ is known. */
  runDeps: RunDeps | undefined;
  deadLetterQueueUrl: string;
  maxReceiveCount: number | undefined;
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * Long-polls its queues, runs handlers up to `concurrency` at once, and settles every message.
 * start() and stop() each return the same promise on every call.
 */
export class Worker {
  readonly config: WorkerConfig;
  readonly #events: SafeEmitter<WorkerEvents>;
  readonly #log: Logger;
  readonly #sqs: QueuePort;
  readonly #control: SQSClient;
  readonly #destroyClients: () => void;
  readonly #lock: JobLock;
  readonly #heartbeat: Heartbeat;
  readonly #acks: DeleteBatcher;
  readonly #metrics: MetricsRecorder | undefined;
  readonly #queues: QueueState[];
  readonly #scheduler: Scheduler<QueueState>;
  readonly #running = new Map<Lease, AbortController>();
  readonly #settling = new Set<Promise<void>>();
  /** Aborts an open long poll: only when stopping at once (second signal), never on a graceful stop. */
  readonly #force = new AbortController();
  /** Aborted when stop() begins: ends backoff sleeps and waits for capacity. */
  readonly #stop = new AbortController();
  readonly #capacity: ReceiveCapacity;
  #idleWaiters: (() => void)[] = [];
  #pollers: Promise<void>[] = [];
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #onSignal: ((signal: NodeJS.Signals) => void) | undefined;
  #settleDepsOnce: SettleDeps | undefined;

  constructor(options: WorkerOptions, env: Env = process.env) {
    this.config = resolveWorkerConfig(options, env);
    const c = this.config;
    this.#log = c.logger ?? createLogger(env);
    this.#events = new SafeEmitter((error, event) => this.#log.error({ err: error, event }, 'an event listener threw; the worker goes on'));
    const poll = c.clients?.poll ?? createSqsClient(c.aws, { maxSockets: c.queues.length * 2, requestTimeoutMs: (c.waitTimeSeconds + 10) * 1000 }, env);
    const control = c.clients?.control ?? createSqsClient(c.aws, { maxSockets: 50, requestTimeoutMs: 10_000 }, env);
    this.#destroyClients = c.clients === undefined ? () => { poll.destroy(); control.destroy(); } : () => {};
    this.#sqs = new SqsQueuePort(poll, control);
    this.#control = control;
    this.#lock = c.lock ?? (c.memcached === undefined ? new NoLock() : new MemcachedLock({
      servers: c.memcached,
      keyPrefix: c.lockKeyPrefix,
      timeoutMs: c.lockTimeoutMs,
      onAvailability: (up, error) => this.#lockAvailability(up, error),
    }));
    this.#heartbeat = new Heartbeat({
      sqs: this.#sqs,
      lock: this.#lock,
      visibilityTimeoutSeconds: c.visibilityTimeoutSeconds,
      intervalMs: c.heartbeatIntervalMs,
      lockTtlSeconds: c.lockTtlSeconds,
      onError: (error) => this.#error('heartbeat', error),
    });
    this.#acks = new DeleteBatcher({
      sqs: this.#sqs,
      flushMs: c.deleteFlushMs,
      onFailure: (m, reason) => this.#error('delete', new Error(`could not delete message ${m.messageId} from ${m.queueUrl}: ${reason}; it will be delivered again`)),
    });
    this.#metrics = createMetricsRecorder(c.metrics, c.aws, this.#log, env);
    this.#metrics?.attach(this);
    this.#capacity = new ReceiveCapacity(c.concurrency + c.prefetch, () => this.#running.size + this.inFlight.buffered);
    this.#queues = c.queues.map((q) => ({
      config: q,
      url: q.url,
      fifo: isFifoQueue(q.url),
      runDeps: undefined,
      weight: q.weight,
      deadLetterQueueUrl: '',
      maxReceiveCount: undefined,
      credit: 0,
    }));
    this.#scheduler = new Scheduler(this.#queues);
  }

  on<K extends keyof WorkerEvents & string>(event: K, listener: (...args: WorkerEvents[K]) => void): this {
    this.#events.on(event, listener);
    return this;
  }

  off<K extends keyof WorkerEvents & string>(event: K, listener: (...args: WorkerEvents[K]) => void): this {
    this.#events.off(event, listener);
    return this;
  }

  once<K extends keyof WorkerEvents & string>(event: K, listener: (...args: WorkerEvents[K]) => void): this {
    this.#events.once(event, listener);
    return this;
  }

  /** Messages held: running handlers and received-but-unstarted. */
  get inFlight(): { running: number; buffered: number } {
    return { running: this.#running.size, buffered: this.#scheduler.size };
  }

  /** Find each queue's DLQ, then start polling. Rejects with ConfigError when a queue has no DLQ. */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  /**
   * Stop receiving, release unstarted messages, let running ones finish until the deadline, then
   * abort and release them. Same promise on every call.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#shutdown();
    return this.#stopped;
  }

  async #start(): Promise<void> {
    for (const q of this.#queues) {
      await this.#resolveDeadLetterQueue(q);
      if (this.#stopping) return; // stop() came first: start nothing
    }
    if (this.config.handleSignals) {
      this.#onSignal = (signal) => {
        if (!this.#stopping) {
          this.#log.info({ signal }, 'stopping: no new messages, finishing running jobs');
          void this.stop();
        } else {
          this.#log.warn({ signal }, 'second signal: stopping now');
          this.#force.abort();
        }
      };
      for (const s of SIGNALS) process.on(s, this.#onSignal);
    }
    this.#heartbeat.start();
    this.#metrics?.start();
    this.#pollers = this.#queues.map((q) => this.#poll(q));
    this.#log.info(
      {
        queues: this.#queues.map((q) => queueNameOf(q.config.url)),
        jobs: this.config.jobs.names(),
        concurrency: this.config.concurrency,
        dedupe: this.config.memcached ?? (this.config.lock ? 'custom' : 'off'),
        metrics: typeof this.config.metrics.sink === 'string' ? this.config.metrics.sink : 'custom',
      },
      'worker started',
    );
  }

  async #resolveDeadLetterQueue(q: QueueState): Promise<void> {
    let policy;
    try {
      policy = await readRedrivePolicy(this.#control, q.config.url);
    } catch (error) {
      throw new ConfigError(`cannot read queue ${q.config.url}: ${toError(error).message}`, { cause: error });
    }
    q.maxReceiveCount = policy?.maxReceiveCount;
    if (q.config.deadLetterQueueUrl !== undefined) {
      q.deadLetterQueueUrl = q.config.deadLetterQueueUrl;
    } else if (policy !== undefined) {
      q.deadLetterQueueUrl = await queueUrlFromArn(this.#control, policy.deadLetterTargetArn);
    } else {
      throw new ConfigError(
        `queue ${q.config.url} has no RedrivePolicy, so poison messages would have nowhere to go: create it with \`sqs-jobs queues create --name ${queueNameOf(q.config.url)}\` or pass deadLetterQueueUrl`,
      );
    }
  }

  async #poll(q: QueueState): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      const count = await this.#capacity.reserve();
      if (count === 0) break; // stopping
      let messages;
      try {
        messages = await this.#sqs.receive(q.config.url, count, this.config.waitTimeSeconds, this.config.visibilityTimeoutSeconds, this.#force.signal);
        failures = 0;
      } catch (error) {
        this.#capacity.release(count);
        if (this.#force.signal.aborted) break;
        failures++;
        this.#error('receive', error);
        await this.#sleep(Math.min(30_000, 250 * 2 ** failures), this.#stop.signal);
        continue;
      }
      const now = Date.now();
      const leases = messages.map((m) => this.#heartbeat.track(m, now));
      if (this.#stopping) {
        // Received while stopping: a graceful stop lets the open poll return rather than abort it
        // (an aborted poll strands what SQS already handed out); hand these back at once.
        this.#capacity.release(count);
        await this.#release(leases, 'worker is stopping');
        break;
      }
      this.#scheduler.add(q.url, leases);
      this.#capacity.release(count);
      this.#dispatch();
    }
  }

  /** Start buffered messages while slots are free, in the order the scheduler gives. */
  #dispatch(): void {
    while (!this.#stopping && this.#running.size < this.config.concurrency) {
      const next = this.#scheduler.next();
      if (next === undefined) break;
      this.#run(next.queue, next.lease);
    }
    this.#capacity.grant();
  }

  #run(q: QueueState, lease: Lease): void {
    const controller = new AbortController();
    this.#running.set(lease, controller);
    q.runDeps ??= this.#runDeps(q);
    runJob(q.runDeps, lease, controller)
      .catch((error: unknown) => {
        // runJob is written not to throw; if it does, hand the message back rather than lose track of it.
        this.#error('run', error);
        const info = describeMessage(this.config.jobs, lease.message);
        const outcome: Outcome = { kind: 'release', reason: `internal error: ${toError(error).message}`, delaySeconds: this.config.visibilityTimeoutSeconds };
        return { info, outcome };
      })
      .then(({ info, outcome }) => {
        // The slot frees as soon as the outcome is known; the SQS calls that settle it go on in the background.
        this.#running.delete(lease);
        if (this.#running.size === 0) this.#wakeIdle();
        const behind = this.#scheduler.finish(lease, BLOCKS_GROUP.has(outcome.kind));
        this.#dispatch();
        this.#track(settle(this.#settle, lease, info, outcome));
        if (behind.length > 0) this.#track(this.#release(behind, 'an earlier message of its FIFO group comes back first'));
      });
  }

  #runDeps(q: QueueState): RunDeps {
    const c = this.config;
    return {
      jobs: c.jobs,
      lock: this.#lock,
      lockTtlSeconds: c.lockTtlSeconds,
      lockFailClosed: c.lockFailClosed,
      visibilityTimeoutSeconds: c.visibilityTimeoutSeconds,
      abortGraceMs: c.abortGraceMs,
      maxReceiveCount: q.maxReceiveCount,
      logger: this.#log,
      logArgs: c.logArgs,
      emit: this.#events.emit.bind(this.#events),
    };
  }

  get #settle(): SettleDeps {
    this.#settleDepsOnce ??= this.#settleDeps();
    return this.#settleDepsOnce;
  }

  #settleDeps(): SettleDeps {
    const c = this.config;
    return {
      sqs: this.#sqs,
      acks: this.#acks,
      heartbeat: this.#heartbeat,
      lock: this.#lock,
      completedTtlSeconds: c.completedTtlSeconds,
      lockTtlSeconds: c.lockTtlSeconds,
      visibilityTimeoutSeconds: c.visibilityTimeoutSeconds,
      deadLetterQueueUrl: (url) => this.#queue(url).deadLetterQueueUrl,
      maxReceiveCount: (url) => this.#queue(url).maxReceiveCount,
      logger: this.#log,
      emit: this.#events.emit.bind(this.#events),
      onError: (where, error) => this.#error(where, error),
    };
  }

  #queue(url: string): QueueState {
    return this.#queues.find((q) => q.url === url)!;
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.#error('settle', error)).finally(() => this.#settling.delete(tracked));
    this.#settling.add(tracked);
  }

  #wakeIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }

  #idle(): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  get #stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  async #shutdown(): Promise<void> {
    this.#stop.abort();
    this.#capacity.close();
    const steps: [string, () => Promise<void> | void][] = [
      ['release unstarted messages', () => this.#release(this.#scheduler.drain(), 'worker is stopping')],
      ['wait for running jobs', async () => {
        if (this.#running.size > 0) {
          this.#log.info({ running: this.#running.size, deadlineMs: this.config.shutdownTimeoutMs }, 'waiting for running jobs');
          await this.#within(this.#idle(), this.config.shutdownTimeoutMs);
          for (const controller of this.#running.values()) {
            controller.abort(new SqsJobsError('SHUTDOWN', 'the worker is stopping and the shutdown deadline passed'));
          }
          await this.#idle();
        }
      }],
      ['wait for open polls', async () => {
        // An open long poll returns within waitTimeSeconds; whatever it brings is released at once.
        const polls = Promise.allSettled(this.#pollers);
        await this.#within(polls, (this.config.waitTimeSeconds + 10) * 1000);
        this.#force.abort();
        await polls;
      }],
      ['settle messages', async () => {
        while (this.#settling.size > 0) await Promise.all([...this.#settling]);
      }],
      ['flush deletes', () => this.#acks.flush()],
      ['flush metrics', () => this.#metrics?.close()],
      ['stop heartbeat', () => this.#heartbeat.close()],
      ['close lock', () => this.#lock.close()],
      ['close clients', () => this.#destroyClients()],
      ['remove signal listeners', () => {
        if (this.#onSignal !== undefined) for (const s of SIGNALS) process.off(s, this.#onSignal);
      }],
    ];
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (error) {
        this.#error(`shutdown: ${name}`, error);
      }
    }
    this.#log.info('worker stopped');
    this.#events.emit('stopped');
  }

  /** Hand unstarted messages back to their queues at once (see releaseUnstarted). */
  #release(leases: Lease[], reason: string): Promise<void> {
    return releaseUnstarted(this.#settle, leases, reason, (lease) => describeMessage(this.config.jobs, lease.message));
  }

  #lockAvailability(up: boolean, error?: Error): void {
    if (up) {
      this.#log.info('memcached reachable again: dedupe lock restored');
      this.#events.emit('lock:restored');
    } else {
      const e = error ?? new Error('memcached unavailable');
      this.#log.warn(
        { err: e },
        this.config.lockFailClosed ? 'memcached unreachable: jobs stay queued until it returns (lockFailClosed)' : 'memcached unreachable: running jobs without the dedupe lock (at-least-once) until it returns',
      );
      this.#events.emit('lock:unavailable', { error: e });
    }
  }

  #error(where: string, error: unknown): void {
    const e = toError(error);
    this.#log.warn({ err: e, where }, `${where} failed`);
    this.#events.emit('error', e);
  }

  /** Wait for `work`, but no longer than `ms` or until a second signal; no timer is left behind. */
  async #within(work: Promise<unknown>, ms: number): Promise<void> {
    const done = new AbortController();
    await Promise.race([work, this.#sleep(ms, AbortSignal.any([this.#force.signal, done.signal]))]);
    done.abort();
  }

  /** Resolve after `ms`, or as soon as `signal` aborts; the timer never outlives it. */
  #sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** Create a worker; call start() to begin polling. */
export function createWorker(options: WorkerOptions, env: Env = process.env): Worker {
  return new Worker(options, env);
}
