import type { Logger } from 'pino';
import type { Env } from '../config.js';
import { toError } from '../errors.js';
import { EventSource } from '../events.js';
import type { WorkerEvents } from '../job-events.js';
import { createLogger } from '../log.js';
import { ReceiveCapacity } from './intake/capacity.js';
import type { Outcome } from './fate/decide.js';
import type { JobInfo } from '../job-events.js';
import type { Abortable, Lease } from './hold/lease.js';
import { resolveWorkerConfig, type WorkerConfig, type WorkerOptions } from './options.js';
import { buildParts, runDeps, settleDeps, type WorkerParts } from './parts.js';
import { poll, type PollerDeps } from './intake/poller.js';
import { type QueueState, queueState, resolveDeadLetterQueue } from './queue-state.js';
import { Batching } from './batch/batching.js';
import { describeMessage, readMessage, type Reading, runJob } from './run/runner.js';
import { Scheduler } from './intake/scheduler.js';
import type { SettleDeps } from './fate/settle-deps.js';
import { retryInPlace, settle } from './fate/settle.js';
import { handBackUnstarted } from './fate/unstarted.js';
import { closingSteps, logStarted } from './lifecycle.js';
import { handleSignals, shutdown } from './shutdown.js';
import { sleep } from '../sleep.js';

/** Outcomes after which a FIFO message comes back to its queue, so its group's later messages must wait for it. */
const BLOCKS_GROUP: ReadonlySet<Outcome['kind']> = new Set(['retry', 'release', 'lost']);

/**
 * Long-polls its queues, runs handlers up to `concurrency` at once, and settles every message:
 * receive (poller) → schedule (scheduler) → run (runner) → settle. This class wires them and owns
 * the lifecycle. start() and stop() each return the same promise on every call.
 */
export class Worker extends EventSource<WorkerEvents> {
  readonly config: WorkerConfig;
  readonly #log: Logger;
  readonly #parts: WorkerParts;
  readonly #queues: QueueState[];
  readonly #scheduler: Scheduler<QueueState>;
  readonly #capacity: ReceiveCapacity;
  /** Handlers running: a message's lease, or a batch's run (one slot of `concurrency` each). */
  readonly #running = new Set<Abortable>();
  readonly #batching: Batching;
  readonly #hasBatchJobs: boolean;
  readonly #settling = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  readonly #force = new AbortController();
  readonly #settle: SettleDeps;
  #idleWaiters: (() => void)[] = [];
  #pollers: Promise<void>[] = [];
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #removeSignalListeners: () => void = () => {};

  constructor(options: WorkerOptions, env: Env = process.env) {
    const c = resolveWorkerConfig(options, env);
    const log = c.logger ?? createLogger(env);
    super((error, event) => log.error({ err: error, event }, 'an event listener threw; the worker goes on'));
    this.config = c;
    this.#log = log;
    const parts = buildParts(c, env, this.#log, this.events, (where, error) => this.#error(where, error));
    this.#parts = parts;
    parts.metrics?.attach(this);
    this.#capacity = new ReceiveCapacity(c.concurrency + c.prefetch, () => this.#running.size + this.#scheduler.size);
    this.#queues = c.queues.map(queueState);
    this.#scheduler = new Scheduler(this.#queues);
    this.#settle = settleDeps(
      c,
      parts,
      this.#log,
      this.events,
      (url) => this.#queues.find((q) => q.url === url)!,
      (where, error) => this.#error(where, error),
    );
    this.#hasBatchJobs = c.jobs.names().some((name) => c.jobs.get(name).kind === 'sqs-jobs/batch-job');
    this.#batching = new Batching({
      run: { ...this.#settle, abortGraceMs: c.abortGraceMs },
      runDeps: (url) => this.#runDeps(this.#queues.find((q) => q.url === url)!),
      maxHeld: c.maxHeldBatchItems,
      canStart: () => !this.#stop.signal.aborted && this.#running.size < c.concurrency,
      started: (run) => this.#running.add(run),
      ended: (run) => {
        this.#ended(run);
        this.#dispatch();
      },
      wake: () => this.#dispatch(),
      conclude: (lease, info, outcome) => this.#conclude(lease, info, outcome),
      stopping: () => this.#stop.signal.aborted,
      shutdownTimeoutMs: c.shutdownTimeoutMs,
      onError: (where, error) => this.#error(where, error),
    });
  }

  /** What the worker holds: handlers running, received-but-unstarted messages, and batch jobs' messages (filling or being flushed). */
  get inFlight(): { running: number; buffered: number; batched: number } {
    return { running: this.#running.size, buffered: this.#scheduler.size, batched: this.#batching.held };
  }

  /** Find each queue's DLQ, then start polling. Rejects with ConfigError when a queue has no DLQ. */
  start(): Promise<void> {
    this.#started ??= this.#start();
    return this.#started;
  }

  /**
   * Stop receiving, hand back unstarted messages, let running ones finish until the deadline, then
   * abort and hand them back. Same promise on every call.
   */
  stop(): Promise<void> {
    this.#stopped ??= shutdown({
      config: this.config,
      log: this.#log,
      stop: this.#stop,
      force: this.#force,
      capacity: this.#capacity,
      handBackBuffered: async () => {
        try {
          await this.#handBack(this.#scheduler.drain(), 'worker is stopping');
        } finally {
          await this.#batching.stop();
        }
      },
      running: this.#running,
      idle: () => this.#idle(),
      pollers: () => this.#pollers,
      settling: this.#settling,
      close: [...closingSteps(this.#parts), ['remove signal listeners', () => this.#removeSignalListeners()]],
      onError: (where, error) => this.#error(where, error),
      onStopped: () => this.events.emit('stopped'),
    });
    return this.#stopped;
  }

  async #start(): Promise<void> {
    for (const q of this.#queues) {
      await resolveDeadLetterQueue(this.#parts.sqs, q);
      if (this.#stop.signal.aborted) return; // stop() came first: start nothing
    }
    if (this.config.handleSignals) {
      this.#removeSignalListeners = handleSignals(
        this.#log,
        () => this.#stop.signal.aborted,
        () => void this.stop(),
        () => this.#force.abort(),
      );
    }
    this.#parts.heartbeat.start();
    this.#parts.metrics?.start();
    const deps: PollerDeps = {
      sqs: this.#parts.sqs,
      capacity: this.#capacity,
      heartbeat: this.#parts.heartbeat,
      waitTimeSeconds: this.config.waitTimeSeconds,
      visibilityTimeoutSeconds: this.config.visibilityTimeoutSeconds,
      stopping: this.#stop.signal,
      force: this.#force.signal,
      onReceived: (url, leases, asked) => {
        this.#scheduler.add(url, leases);
        this.#batching.received(url, asked, leases.length);
        this.#dispatch();
      },
      onReceivedWhileStopping: (leases) => this.#handBack(leases, 'worker is stopping'),
      onError: (where, error) => this.#error(where, error),
    };
    this.#pollers = this.#queues.flatMap((q) => Array.from({ length: this.config.receiveConcurrency }, () => poll(deps, q.url)));
    logStarted(this.#log, this.config, this.#queues);
  }

  /**
   * Start buffered messages while handler slots are free, in the order the scheduler gives; a batch
   * job's message joins its batch instead, while the batch budget has room.
   */
  #dispatch(): void {
    // A message whose kind has no room now (no free handler slot; the batch budget full) is set
    // aside, so the other kind behind it still starts; set-aside messages go back first, in order.
    const setAside: Lease[] = [];
    while (!this.#stop.signal.aborted) {
      const free = this.#running.size < this.config.concurrency;
      // Without batch jobs, a full worker stops here: no message is read only to be set aside.
      if (!free && !(this.#hasBatchJobs && this.#batching.hasRoom())) break;
      const next = this.#scheduler.next();
      if (next === undefined) break;
      const read = readMessage(this.config.jobs, next.lease.message);
      const batchJob = read.ok && read.job.kind === 'sqs-jobs/batch-job' ? read.job : undefined;
      if (!(batchJob === undefined ? free : this.#batching.hasRoom())) {
        setAside.push(next.lease);
        continue;
      }
      if (batchJob !== undefined && read.ok) this.#batching.admit(next.lease, read, batchJob);
      else this.#run(next.queue, next.lease, read);
    }
    for (const lease of setAside.reverse()) this.#scheduler.putBack(lease);
    this.#batching.pump();
    const orphans = this.#scheduler.takeOrphans();
    if (orphans.length > 0) this.#track(this.#handBack(orphans, 'an earlier message of its FIFO group was lost while waiting'));
    this.#capacity.grant();
  }

  #runDeps(q: QueueState) {
    q.runDeps ??= runDeps(this.config, this.#parts, q.maxReceiveCount, this.#log, this.events, () => this.#stop.signal.aborted);
    return q.runDeps;
  }

  #run(q: QueueState, lease: Lease, read: Reading): void {
    this.#running.add(lease);
    runJob(this.#runDeps(q), lease, read)
      .catch((error: unknown) => {
        // runJob is written not to throw; if it does, hand the message back rather than lose track of it.
        this.#error('run', error);
        const outcome: Outcome = {
          kind: 'release',
          reason: `internal error: ${toError(error).message}`,
          delaySeconds: this.config.visibilityTimeoutSeconds,
          abandoned: false,
        };
        return { info: describeMessage(this.config.jobs, lease.message), outcome };
      })
      .then(({ info, outcome }) => {
        // The slot frees as soon as the outcome is known; the SQS calls that settle it go on in the background.
        this.#ended(lease);
        if (q.fifo && outcome.kind === 'retry' && !outcome.abandoned && !lease.lost) {
          // Its group waits for it; retried here once the lock is released.
          this.#track(retryInPlace(this.#settle, lease, info, outcome).then(() => this.#retryLater(lease, outcome.delayMs)));
          this.#dispatch();
          return;
        }
        this.#conclude(lease, info, outcome);
        this.#dispatch();
      });
  }

  /** A handler ended: its slot is free. */
  #ended(handler: Abortable): void {
    this.#running.delete(handler);
    if (this.#running.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** A message's outcome is known: settle it, and hand back what its FIFO group had buffered if the group must wait for it. */
  #conclude(lease: Lease, info: JobInfo, outcome: Outcome): void {
    const behind = this.#scheduler.finish(lease, BLOCKS_GROUP.has(outcome.kind));
    this.#track(settle(this.#settle, lease, info, outcome));
    if (behind.length > 0) this.#track(this.#handBack(behind, 'an earlier message of its FIFO group comes back first'));
  }

  /** Put a FIFO job back at the head of its group, to start after `delayMs`. */
  async #retryLater(lease: Lease, delayMs: number): Promise<void> {
    if (this.#stop.signal.aborted || lease.lost) {
      // Stopping: hand it back. Lost meanwhile: SQS gives it out again, so its group's buffered
      // messages must go back behind it.
      const behind = this.#scheduler.finish(lease, lease.lost);
      await this.#handBack([lease, ...behind], lease.lost ? 'an earlier message of its FIFO group comes back first' : 'worker is stopping');
      return;
    }
    this.#scheduler.retryLater(lease, delayMs);
    await sleep(delayMs, this.#stop.signal);
    this.#dispatch();
  }

  /** Hand unstarted messages back to their queues at once (see handBackUnstarted). */
  #handBack(leases: Lease[], reason: string): Promise<void> {
    return handBackUnstarted(this.#settle, leases, reason, (lease) => describeMessage(this.config.jobs, lease.message));
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.#error('settle', error)).finally(() => this.#settling.delete(tracked));
    this.#settling.add(tracked);
  }

  #idle(): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #error(where: string, error: unknown): void {
    const e = toError(error);
    this.#log.warn({ err: e, where }, `${where} failed`);
    this.events.emit('error', e);
  }
}

/** Create a worker; call start() to begin polling. */
export function createWorker(options: WorkerOptions, env: Env = process.env): Worker {
  return new Worker(options, env);
}
