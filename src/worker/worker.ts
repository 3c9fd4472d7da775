import type { Env } from '../config/env.js';
import { toError } from '../core/errors.js';
import { EventSource } from '../core/events.js';
import { isBatchJob } from '../core/batch-job.js';
import type { WorkerEvents } from '../core/job-events.js';
import { createLogger } from '../config/log.js';
import { Activity } from './activity.js';
import { Batching } from './batch/batching.js';
import type { WorkerContext } from './context.js';
import type { Acts } from './fate/acts.js';
import { Fate } from './fate/conclude.js';
import { Delivery, type DeliveryHost } from './delivery.js';
import type { Lease } from './hold/lease.js';
import { ReceiveCapacity } from './intake/capacity.js';
import { type Intake, pollQueue } from './intake/poller.js';
import { Scheduler } from './intake/scheduler.js';
import { closingSteps, logStarted } from './lifecycle.js';
import { resolveWorkerConfig, type WorkerConfig } from './config.js';
import type { WorkerOptions } from './options.js';
import { type QueueState, queueState, resolveDeadLetterQueue } from './queue-state.js';
import { readOnce } from './run/read.js';
import { batchJobOf } from './reading.js';
import { handleSignals, shutdown } from './shutdown.js';
import { WaitingRoom } from './turns/room.js';
import type { ScheduleTicks } from './schedule-ticks.js';
import { buildContext } from './wiring.js';

/**
 * Long-polls its queues, runs handlers up to `concurrency` at once, and settles every message, one
 * way: receive (intake/) → schedule (intake/scheduler) → deliver (delivery.ts: claim, its turn in
 * turns/, run in run/, decide in decide/; batch/ for batch jobs) → conclude and settle (fate/). This
 * class wires them, dispatches, and owns the lifecycle. start() and stop() each return the same
 * promise on every call.
 */
export class Worker extends EventSource<WorkerEvents> {
  readonly config: WorkerConfig;
  readonly #ctx: WorkerContext;
  /** What may be done to a held message: the fate's alone (fate/acts.ts). */
  readonly #acts: Acts;
  readonly #queues: QueueState[];
  readonly #scheduler: Scheduler<QueueState>;
  readonly #capacity: ReceiveCapacity<QueueState>;
  readonly #activity: Activity;
  readonly #fate: Fate;
  /** Where a job at its tenant's cap or its rate limit waits (held, in no handler slot) for its turn. */
  readonly #room: WaitingRoom;
  /** The schedule ticks (option `schedules`). */
  readonly #ticks: ScheduleTicks | undefined;
  readonly #batching: Batching;
  readonly #hasBatchJobs: boolean;
  /** Tenant caps are set (with the permits to count them): who shares a queue is tracked. */
  readonly #hasCaps: boolean;
  /**
   * Where a job at its tenant's cap or its rate limit may wait: one that has waited keeps its place;
   * a new one while fewer than twice the free room wait; of one tenant, at most the free room.
   */
  readonly #deliveries: DeliveryHost;
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
    this.#activity = new Activity(c.concurrency, onError);
    ctx.tenants?.attach(this, () => this.#activity.jobsRunning());
    this.#scheduler = new Scheduler(this.#queues, c.pick);
    this.#hasBatchJobs = c.jobs.names().some((name) => isBatchJob(c.jobs.get(name)));
    this.#capacity = new ReceiveCapacity(
      { concurrency: c.concurrency, prefetch: c.prefetch, pick: c.pick, receiveConcurrency: c.receiveConcurrency },
      {
        running: () => this.#activity.running.size,
        // Messages waiting for their turn are the waiting room's (turns/room.ts): not buffered here,
        // and counted against their queue's intake only past the room's free part.
        buffered: (q) => (q === undefined ? this.#scheduler.size - this.#scheduler.waiting : this.#scheduler.bufferedOf(q.url, false)),
        startable: () => this.#scheduler.startable(),
        waiting: (q) => this.#room.counted(q.url),
        ...(this.#hasBatchJobs ? { batches: { feeds: (q) => this.#batching.feeds(q.url), room: () => this.#batching.room() } } : {}),
      },
    );
    this.#room = new WaitingRoom(
      {
        ctx,
        scheduler: this.#scheduler,
        activity: this.#activity,
        wake: () => this.#dispatch(),
        handBackWaiting: (lease, reason) => this.#fate.handBackWaiting(lease, reason),
      },
      c.concurrency + c.prefetch,
    );
    this.#fate = new Fate(ctx, acts, this.#scheduler, this.#activity, this.#room, () => this.#dispatch());
    this.#batching = new Batching(ctx, this.#activity, this.#fate, () => this.#dispatch());
    this.#hasCaps = ctx.permits !== undefined && Object.keys(c.tenantCaps).length > 0;
    this.#deliveries = {
      ctx,
      room: this.#room,
      activity: this.#activity,
      fate: this.#fate,
      dispatch: () => this.#dispatch(),
    };
  }

  /** What the worker holds: handlers running, received-but-unstarted messages, and batch jobs' messages (filling or being flushed). */
  get inFlight(): { running: number; buffered: number; batched: number } {
    return { running: this.#activity.running.size, buffered: this.#scheduler.size, batched: this.#batching.held };
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
    this.#stopped ??= shutdown(this.#ctx, {
      capacity: this.#capacity,
      activity: this.#activity,
      handBackBuffered: async () => {
        try {
          await this.#fate.handBackUnstarted(this.#scheduler.drain(), 'worker is stopping');
        } finally {
          await this.#batching.stop();
        }
      },
      pollers: () => this.#pollers,
      close: [
        ['end schedule ticks', () => this.#ticks?.ended()],
        ['stop permit polls', () => this.#room.close()],
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
    // What it holds unstarted per queue: producers' admission counts it as waiting, with the backlog.
    this.#ctx.drains?.watch(() => this.#queues.map((q) => [q.url, this.#scheduler.aheadOf(q.url)] as const));
    const intake: Intake = {
      capacity: this.#capacity,
      received: (url, leases, asked) => {
        // Who shares each queue, for tenant caps (CapTurns.contended): read now, as every message is once.
        if (this.#hasCaps) for (const lease of leases) this.#room.turns.seen(url, readOnce(this.config.jobs, lease).info.tenant);
        this.#scheduler.add(url, leases);
        if (this.#hasBatchJobs) this.#batching.received(url, asked, leases);
        this.#dispatch();
      },
      receivedWhileStopping: (leases) => this.#fate.handBackUnstarted(leases, 'worker is stopping'),
    };
    this.#pollers = this.#queues.map((q) => pollQueue(this.#ctx, intake, q, this.config.receiveConcurrency));
    this.#ticks?.start();
    logStarted(this.#ctx.report.log, this.config, this.#queues);
  }

  /**
   * Start buffered messages while handler slots are free, in the order the scheduler gives; a batch
   * job's message joins its batch instead, while the batch budget has room.
   */
  #dispatch(): void {
    // A message whose kind has no room now (no free handler slot; the batch budget full) is set
    // aside, so the other kind behind it still starts; set-aside messages go back first, in order.
    const setAside: Lease[] = [];
    while (!this.#ctx.stop.signal.aborted) {
      const free = this.#activity.hasFreeSlot();
      // Without batch jobs, a full worker stops here: no message is read only to be set aside.
      if (!free && !(this.#hasBatchJobs && this.#batching.hasRoom())) break;
      const next = this.#scheduler.next();
      if (next === undefined) break;
      const read = readOnce(this.config.jobs, next.lease);
      const batchJob = batchJobOf(read);
      if (!(batchJob === undefined ? free : this.#batching.hasRoom())) setAside.push(next.lease);
      else if (batchJob !== undefined && read.ok) this.#batching.admit(next.lease, read, batchJob);
      else Delivery.start(this.#deliveries, next.lease, read);
    }
    for (const lease of setAside.reverse()) this.#scheduler.putBack(lease);
    if (this.#hasBatchJobs) this.#batching.pump();
    const orphans = this.#scheduler.takeOrphans();
    if (orphans.length > 0)
      this.#activity.follow(this.#fate.handBackUnstarted(orphans, 'an earlier message of its FIFO group was lost while waiting'));
    this.#capacity.grant();
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
