import { isBatchJob } from '../core/batch-job.js';
import { Activity } from './activity.js';
import { Batching } from './batch/batching.js';
import type { WorkerContext } from './context.js';
import { Delivery, type DeliveryHost } from './delivery.js';
import type { Acts } from './fate/acts.js';
import { Fate } from './fate/conclude.js';
import type { Lease } from './hold/lease.js';
import { Scheduler } from './intake/scheduler.js';
import type { QueueState } from './queue-state.js';
import { batchJobOf } from './reading.js';
import { readOnce } from './run/read.js';
import { WaitingRoom } from './turns/room.js';

/** What differs between a worker's walks and a Lambda invocation's. */
export interface WalkSettings {
  /**
   * How many may wait in the room without braking intake (a worker's concurrency + prefetch; 0
   * where nothing can be held waiting, so a job at its cap or rate limit is deferred).
   */
  readonly freeRoom: number;
  /** Called after each dispatch: the receive loops may ask for more. */
  readonly dispatched?: () => void;
  /**
   * Until when anything may be held: a Lambda invocation's deadline. With it, a wait that would end
   * later, a wait with no known end (a pause) and a FIFO retry in place are not held; without it (a
   * worker), holds end only at SQS's limit.
   */
  readonly holdUntil?: () => number;
}

/**
 * Where held messages walk, whoever brought them: the scheduler that orders them, the handler
 * slots, the waiting room, the batches, and the fate that ends each one. A worker feeds it from
 * its receive loops; a Lambda invocation from its event's records (src/lambda/). Each message walks
 * one way: received → scheduled → a delivery (delivery.ts) or a batch (batch/) → its fate (fate/).
 */
export class Walks {
  readonly scheduler: Scheduler<QueueState>;
  readonly activity: Activity;
  readonly fate: Fate;
  /** Where a job at its tenant's cap or its rate limit waits (held, in no handler slot) for its turn. */
  readonly room: WaitingRoom;
  readonly batching: Batching;
  readonly hasBatchJobs: boolean;
  readonly #ctx: WorkerContext;
  /** Tenant caps are set (with the permits to count them): who shares a queue is tracked. */
  readonly #hasCaps: boolean;
  readonly #deliveries: DeliveryHost;
  /** Called after each dispatch: the receive loops may ask for more. */
  readonly #dispatched: () => void;

  constructor(ctx: WorkerContext, acts: Acts, queues: readonly QueueState[], o: WalkSettings) {
    const c = ctx.config;
    this.#ctx = ctx;
    this.#dispatched = o.dispatched ?? (() => {});
    this.activity = new Activity(c.concurrency, ctx.report.onError);
    this.scheduler = new Scheduler(queues, c.pick);
    this.hasBatchJobs = c.jobs.names().some((name) => isBatchJob(c.jobs.get(name)));
    this.room = new WaitingRoom(
      {
        ctx,
        scheduler: this.scheduler,
        activity: this.activity,
        wake: () => this.dispatch(),
        handBackWaiting: (lease, reason) => this.fate.handBackWaiting(lease, reason),
      },
      o.freeRoom,
      o.holdUntil,
    );
    this.fate = new Fate(ctx, acts, this.scheduler, this.activity, this.room, () => this.dispatch(), o.holdUntil === undefined);
    this.batching = new Batching(ctx, this.activity, this.fate, () => this.dispatch());
    this.#hasCaps = ctx.permits !== undefined && Object.keys(c.tenantCaps).length > 0;
    this.#deliveries = { ctx, room: this.room, activity: this.activity, fate: this.fate, dispatch: () => this.dispatch() };
  }

  /** What is held: handlers running, received-but-unstarted messages, and batch jobs' messages (filling or being flushed). */
  get inFlight(): { running: number; buffered: number; batched: number } {
    return { running: this.activity.running.size, buffered: this.scheduler.size, batched: this.batching.held };
  }

  /** Messages received from `queueUrl` (`asked`: how many the receive asked for), held already: scheduled, and started while there is room. */
  received(queueUrl: string, leases: Lease[], asked: number): void {
    // Who shares each queue, for tenant caps (CapTurns.contended): read now, as every message is once.
    if (this.#hasCaps) for (const lease of leases) this.room.turns.seen(queueUrl, readOnce(this.#ctx.config.jobs, lease).info.tenant);
    this.scheduler.add(queueUrl, leases);
    if (this.hasBatchJobs) this.batching.feeds.received(queueUrl, asked, leases);
    this.dispatch();
  }

  /**
   * Start buffered messages while handler slots are free, in the order the scheduler gives; a batch
   * job's message joins its batch instead, while the batch budget has room.
   */
  dispatch(): void {
    // A message whose kind has no room now (no free handler slot; the batch budget full) is set
    // aside, so the other kind behind it still starts; set-aside messages go back first, in order.
    const setAside: Lease[] = [];
    while (!this.#ctx.stop.signal.aborted) {
      const free = this.activity.hasFreeSlot();
      // Without batch jobs, a full worker stops here: no message is read only to be set aside.
      if (!free && !(this.hasBatchJobs && this.batching.hasRoom())) break;
      const next = this.scheduler.next();
      if (next === undefined) break;
      const read = readOnce(this.#ctx.config.jobs, next.lease);
      const batchJob = batchJobOf(read);
      if (!(batchJob === undefined ? free : this.batching.hasRoom())) setAside.push(next.lease);
      else if (batchJob !== undefined && read.ok) this.batching.admit(next.lease, read, batchJob);
      else Delivery.start(this.#deliveries, next.lease, read);
    }
    for (const lease of setAside.reverse()) this.scheduler.putBack(lease);
    if (this.hasBatchJobs) this.batching.pump();
    const orphans = this.scheduler.takeOrphans();
    if (orphans.length > 0)
      this.activity.follow(this.fate.handBackUnstarted(orphans, 'an earlier message of its FIFO group was lost while waiting'));
    this.#dispatched();
  }
}
