import type { Env } from '../config/env.js';
import { toError } from '../core/errors.js';
import { EventSource } from '../core/events.js';
import type { WorkerEvents } from '../core/job-events.js';
import { createLogger } from '../config/log.js';
import type { WorkerContext } from './context.js';
import type { Acts } from './fate/acts.js';
import { ReceiveCapacity } from './intake/capacity.js';
import { type Intake, pollQueue } from './intake/poller.js';
import { closingSteps, logStarted } from './lifecycle.js';
import { resolveWorkerConfig, type WorkerConfig } from './config.js';
import type { WorkerOptions } from './options.js';
import { type QueueState, queueState, resolveDeadLetterQueue } from './queue-state.js';
import { handleSignals, shutdown } from './shutdown.js';
import type { ScheduleTicks } from './schedule-ticks.js';
import { Walks } from './walks.js';
import { buildContext } from './wiring.js';

/**
 * Long-polls its queues, runs handlers up to `concurrency` at once, and settles every message, one
 * way: receive (intake/) → walk (walks.ts: schedule, deliver or batch, conclude and settle). This
 * class wires the receive loops to the walks and owns the lifecycle. start() and stop() each return
 * the same promise on every call.
 */
export class Worker extends EventSource<WorkerEvents> {
  readonly config: WorkerConfig;
  readonly #ctx: WorkerContext;
  /** What may be done to a held message: the fate's alone (fate/acts.ts). */
  readonly #acts: Acts;
  readonly #queues: QueueState[];
  readonly #walks: Walks;
  readonly #capacity: ReceiveCapacity<QueueState>;
  /** The schedule ticks (option `schedules`). */
  readonly #ticks: ScheduleTicks | undefined;
  #pollers: Promise<void>[] = [];
  #started: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #removeSignalListeners: () => void = () => {};

  constructor(options: WorkerOptions, env: Env = process.env) {
    const c = resolveWorkerConfig(options, env);
    const log = c.logger ?? createLogger(env);
    super((error, event) => log.error({ err: error, event }, 'an event listener threw; the worker goes on'));
    this.config = c;
    const onError = (where: string, error: unknown) => this.#error(where, error);
    this.#queues = c.queues.map(queueState);
    const { ctx, acts, ticks } = buildContext(c, env, log, this.events, this.#queues, onError);
    this.#ctx = ctx;
    this.#acts = acts;
    this.#ticks = ticks;
    ctx.metrics?.attach(this);
    // Where a job at its tenant's cap or its rate limit may wait: one that has waited keeps its place;
    // a new one while fewer than twice the free room wait; of one tenant, at most the free room.
    const walks = new Walks(ctx, acts, this.#queues, {
      freeRoom: c.concurrency + c.prefetch,
      dispatched: () => this.#capacity.grant(),
    });
    this.#walks = walks;
    ctx.tenants?.attach(this, () => walks.activity.jobsRunning());
    const { scheduler, batching } = walks;
    this.#capacity = new ReceiveCapacity(
      { concurrency: c.concurrency, prefetch: c.prefetch, pick: c.pick, receiveConcurrency: c.receiveConcurrency },
      {
        running: () => walks.activity.running.size,
        // Messages waiting for their turn are the waiting room's (turns/room.ts): not buffered here,
        // and counted against their queue's intake only past the room's free part.
        buffered: (q) => (q === undefined ? scheduler.size - scheduler.waiting : scheduler.bufferedOf(q.url, false)),
        startable: () => scheduler.startable(),
        waiting: (q) => walks.room.counted(q.url),
        ...(walks.hasBatchJobs ? { batches: { feeds: (q) => batching.feeds.feeds(q.url), room: () => batching.room() } } : {}),
      },
    );
  }

  /** What the worker holds: handlers running, received-but-unstarted messages, and batch jobs' messages (filling or being flushed). */
  get inFlight(): { running: number; buffered: number; batched: number } {
    return this.#walks.inFlight;
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
    const walks = this.#walks;
    this.#stopped ??= shutdown(this.#ctx, {
      capacity: this.#capacity,
      activity: walks.activity,
      handBackBuffered: async () => {
        try {
          await walks.fate.handBackUnstarted(walks.scheduler.drain(), 'worker is stopping');
        } finally {
          await walks.batching.stop();
        }
      },
      pollers: () => this.#pollers,
      close: [
        ['end schedule ticks', () => this.#ticks?.ended()],
        ['stop permit polls', () => walks.room.close()],
        ['stop watching pauses', () => this.#ctx.pauses?.close()],
        ...closingSteps(this.#ctx, this.#acts),
        ['remove signal listeners', () => this.#removeSignalListeners()],
      ],
    }).then(() => this.events.emit('stopped'));
    return this.#stopped;
  }

  async #start(): Promise<void> {
    const stop = this.#ctx.stop;
    for (const q of this.#queues) {
      await resolveDeadLetterQueue(this.#ctx.sqs, q);
      if (stop.signal.aborted) return; // stop() came first: start nothing
    }
    if (this.config.handleSignals) {
      this.#removeSignalListeners = handleSignals(
        this.#ctx.report.log,
        () => stop.signal.aborted,
        () => void this.stop(),
        () => this.#ctx.force.abort(),
      );
    }
    // The pauses in force before the first receive: a paused queue is not received from at all.
    await this.#ctx.pauses?.start();
    if (stop.signal.aborted) return;
    this.#ctx.heartbeat.start();
    this.#ctx.metrics?.start();
    const walks = this.#walks;
    // What it holds unstarted per queue: producers' admission counts it as waiting, with the backlog.
    this.#ctx.drains?.watch(() => this.#queues.map((q) => [q.url, walks.scheduler.aheadOf(q.url)] as const));
    const intake: Intake = {
      capacity: this.#capacity,
      received: (url, leases, asked) => walks.received(url, leases, asked),
      receivedWhileStopping: (leases) => walks.fate.handBackUnstarted(leases, 'worker is stopping'),
    };
    this.#pollers = this.#queues.map((q) => pollQueue(this.#ctx, intake, q, this.config.receiveConcurrency));
    this.#ticks?.start();
    logStarted(this.#ctx.report.log, this.config, this.#queues);
  }

  #error(where: string, error: unknown): void {
    const e = toError(error);
    this.#ctx.report.log.warn({ err: e, where }, `${where} failed`);
    this.events.emit('error', e);
  }
}

/** Create a worker; call start() to begin polling. */
export function createWorker(options: WorkerOptions, env: Env = process.env): Worker {
  return new Worker(options, env);
}
