import { LaneAsks } from './lane-asks.js';
import type { CapacityLimits, Holding } from './holding.js';
import { BatchLanes, type Asking } from './batch-lanes.js';
import { bufferQuota, type Lane, LanePicker } from './lanes.js';
import { Reservations } from './reservations.js';

export type { BatchHolding, CapacityLimits, Holding } from './holding.js';

export { LONG_POLL_MS } from './reservations.js';

/**
 * How many more messages the worker may ask SQS for: concurrency + prefetch, less what it holds
 * (running and buffered) less what open receive calls were promised. With several lanes busy, a
 * lane may also hold no more of the buffer than its quota (bufferQuota), beyond free handler slots.
 *
 * Reservations are made synchronously, so pollers woken together cannot count the same places
 * twice. Pollers waiting for room are served by their lanes (see LanePicker: a higher tier first
 * under strict, else by weight), in arrival order within a lane; a poller that just freed a place
 * cannot take it again ahead of one already waiting (with one place and two queues, both get polled).
 * While every handler has a message to go on with, the poller whose turn it is waits until a full
 * receive is free (see #fullReceive), keeping its turn: one call per ten messages, not per one or two.
 */
export class ReceiveCapacity<Q extends Lane = Lane> {
  readonly #limits: CapacityLimits;
  readonly #holding: Holding<Q>;
  readonly #picker: LanePicker<Q>;
  readonly #reserved = new Reservations<Q>();
  /** Lanes that bring batch jobs' messages: a worker with batch jobs only. */
  readonly #batchLanes: BatchLanes<Q> | undefined;
  /** What each lane's poller last asked for; `busy`: the lanes whose last poll found some. */
  readonly #asks = new LaneAsks<Q>();
  readonly #busy = this.#asks.busy;
  /** Set while an ask is held back by a lane whose receive may go stale: grant() runs again then. */
  #staleCheck: NodeJS.Timeout | undefined;
  #asking: Asking<Q>[] = [];
  #closed = false;

  constructor(limits: CapacityLimits, holding: Holding<Q>) {
    this.#limits = limits;
    this.#holding = holding;
    this.#batchLanes = holding.batches === undefined ? undefined : new BatchLanes(holding.batches, holding, limits, this.#reserved);
    // Receive turns are charged per message: receives differ in size (a lane's quota, what came).
    this.#picker = new LanePicker(limits.pick, 'message');
  }

  get reserved(): number {
    return this.#reserved.total;
  }

  /**
   * Up to `max` (at most 10) places for a receive from `lane`, once it is its turn, the lane has room
   * and the receive would be full or a handler would otherwise go idle; 0 once closed. `max` 1 says
   * the lane's last poll found nothing.
   */
  reserve(lane?: Q, max = 10): Promise<number> {
    if (this.#closed) return Promise.resolve(0);
    if (lane !== undefined) {
      // Work again: level with the lanes that had it meanwhile (join skips the lane itself).
      if (this.#asks.asked(lane, max)) this.#picker.join(lane, this.#busy);
    }
    const promise = new Promise<number>((resolve) => this.#asking.push({ lane, max, resolve }));
    this.grant();
    return promise;
  }

  /** A receive promised `count` places has ended, having brought `received` (already counted as held). */
  returnReserved(count: number, lane?: Q, received = count): void {
    // Turns are charged only to lanes served in turn (not those of batch jobs, BatchLanes).
    if (lane !== undefined && this.#batchLanes?.feeds(lane) !== true) this.#picker.refund(lane, count - received);
    this.#reserved.give(lane, count);
    this.grant();
  }

  /** Capacity may have changed: hand it to waiting pollers with room, the lane whose turn it is first. */
  grant(): void {
    this.#batchLanes?.grant(this.#asking, () => this.#free());
    while (this.#asking.length > 0) {
      const free = Math.min(10, this.#free());
      if (free <= 0) return;
      const lanes = [...new Set(this.#asking.map((w) => w.lane))].filter((l) => this.#batchLanes?.feeds(l) !== true && this.#room(l) > 0);
      if (lanes.length === 0) return;
      // Whose turn it is (counted only once served: a turn that waits for a full receive keeps its place).
      const lane = lanes.length === 1 || lanes.includes(undefined) ? lanes[0] : this.#picker.peek(lanes as Q[]);
      const index = this.#asking.findIndex((w) => w.lane === lane);
      const ask = this.#asking[index]!;
      // Not full yet: more free places would make it fuller. (A lane held below that by its quota
      // gets what it can: waiting would not give it more. One braked by its waiting messages has
      // no room until a full receive fits: #room.)
      if (free < this.#fullReceive(ask) && !this.#starving()) {
        this.#armStaleCheck();
        return;
      }
      const count = Math.min(free, ask.max, this.#room(ask.lane));
      if (lane !== undefined)
        this.#picker.commit(
          lanes.filter((l) => l !== undefined),
          lane,
          count,
        );
      this.#asking.splice(index, 1);
      this.#reserved.take(ask.lane, count, Date.now());
      ask.resolve(count);
    }
  }

  /** Whether a receive of `count` from `lane` would be granted now (room, quota and brake permitting). */
  hasRoomFor(count: number, lane?: Q): boolean {
    if (this.#closed) return false;
    if (lane !== undefined && this.#batchLanes?.feeds(lane) === true) return this.#batchLanes.free(lane, this.#free()) >= count;
    return Math.min(this.#free(), this.#room(lane)) >= count;
  }

  /** Answer every ask with 0; later calls to reserve() resolve 0 at once. */
  close(): void {
    this.#closed = true;
    if (this.#staleCheck !== undefined) clearTimeout(this.#staleCheck);
    for (const w of this.#asking.splice(0)) w.resolve(0);
  }

  /**
   * How many free places make `ask`'s receive worth its call while every handler has a message to
   * go on with: what it asks for (10, or fewer after a poll that found few), its lane's buffer quota
   * when smaller, and at most half of `concurrency + prefetch` (so a small room still receives ahead
   * of need). Waiting for them, a busy worker receives ten at a time as places free rather than one
   * or two per call; a handler slot about to go idle is served at once (#starving).
   */
  #fullReceive(ask: Asking<Q>): number {
    const { concurrency, prefetch, pick } = this.#limits;
    const quota =
      ask.lane === undefined || pick === undefined
        ? Number.POSITIVE_INFINITY
        : bufferQuota(pick, ask.lane, this.#busyNow(), prefetch, (l) => this.#need(l));
    return Math.min(ask.max, quota, Math.ceil((concurrency + prefetch) / 2));
  }

  /**
   * The lanes with work now: their last poll found some, and they hold messages or their receive is
   * not yet LONG_POLL_MS old. A receive out longer waits on a queue that has run dry (SQS answers at
   * once when it has messages), and its lane no longer keeps the others to their quota.
   */
  #busyNow(): ReadonlySet<Q> {
    if (this.#busy.size <= 1) return this.#busy;
    const now = Date.now();
    const busy = new Set<Q>();
    for (const lane of this.#busy) {
      if (!this.#reserved.isStale(lane, now) || this.#holding.buffered(lane) > 0) busy.add(lane);
    }
    return busy;
  }

  /**
   * A handler slot is free with nothing to take it: no buffered message that can start, and no
   * receive out that may still bring one (a probe of an empty queue, or a receive out LONG_POLL_MS,
   * is waiting on a queue that has run dry).
   */
  #starving(): boolean {
    const ready = this.#holding.startable?.() ?? this.#holding.buffered();
    // Slots promised to receives that may still bring work for a handler: not probes, not stale,
    // not those of lanes that bring batch jobs' messages (those fill batches).
    const live =
      this.#reserved.total === 0
        ? 0
        : this.#reserved.live(Date.now(), (lane) => (lane === undefined || this.#busy.has(lane)) && this.#batchLanes?.feeds(lane) !== true);
    return this.#limits.concurrency - this.#holding.running() - ready - live > 0;
  }

  /** A receive out now turns stale LONG_POLL_MS after it was granted: look again then (quotas and #starving change with it). */
  #armStaleCheck(): void {
    if (this.#staleCheck !== undefined || this.#reserved.total === 0) return;
    const now = Date.now();
    // Only receives not stale yet: one already stale changes nothing more.
    const next = this.#reserved.nextStaleAt(now);
    if (next === undefined) return;
    this.#staleCheck = setTimeout(() => {
      this.#staleCheck = undefined;
      this.grant();
    }, next - now);
    this.#staleCheck.unref();
  }

  /** What a lane needs of the buffer (LaneAsks.need), beside what it buffers and its other receives out. */
  #need(lane: Q): number {
    return this.#asks.need(lane, this.#holding.buffered(lane) + this.#reserved.of(lane));
  }

  /**
   * The handlers' room: concurrency + prefetch, less what runs, is buffered, or was promised to
   * receives, but for those of lanes that bring batch jobs' messages (BatchLanes).
   */
  #free(): number {
    const promised = this.#reserved.total - (this.#batchLanes?.promised() ?? 0);
    const { concurrency, prefetch } = this.#limits;
    return concurrency + prefetch - this.#holding.running() - this.#holding.buffered() - promised;
  }

  /**
   * What `lane` may still ask for: what is free less its waiting messages that count (Holding's
   * `waiting`); and with tiers, its buffer quota less what it buffers and has asked for, plus the
   * handler slots idle now. Other lanes' open polls are not counted against the quota: a poll that
   * waits for work that trickles in would otherwise keep idle places from a lane with work waiting
   * (the total stays within concurrency + prefetch either way).
   */
  #room(lane: Q | undefined): number {
    if (lane === undefined) return Number.POSITIVE_INFINITY;
    // A lane whose waiting messages pile up receives only as they leave; the other lanes go on.
    const waiting = this.#holding.waiting?.(lane) ?? 0;
    let room = Number.POSITIVE_INFINITY;
    if (waiting > 0) {
      // Ten at a time (or half the room, or all it can ever have, when smaller): a receive per
      // message that leaves would cost a call each.
      const all = this.#limits.concurrency + this.#limits.prefetch;
      room = this.#free() - waiting;
      if (room < Math.min(10, Math.ceil(all / 2), all - waiting)) room = 0;
    }
    return Math.min(room, this.#quotaRoom(lane));
  }

  #quotaRoom(lane: Q): number {
    if (this.#limits.pick === undefined) return Number.POSITIVE_INFINITY;
    const quota = bufferQuota(this.#limits.pick, lane, this.#busyNow(), this.#limits.prefetch, (l) => this.#need(l));
    if (quota === Number.POSITIVE_INFINITY) return quota;
    const idle = Math.max(0, this.#limits.concurrency - this.#holding.running() - this.#holding.buffered());
    return quota - this.#holding.buffered(lane) - this.#reserved.of(lane) + idle;
  }
}
