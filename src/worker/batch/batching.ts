import type { AnyBatchJob } from '../../core/batch-job.js';
import { toError } from '../../core/errors.js';
import { trackingOf } from '../../status/tracker.js';
import type { Activity } from '../activity.js';
import type { WorkerContext } from '../context.js';
import type { Fate } from '../fate/conclude.js';
import { cutShort, handedBackNow, internalError, poisoned } from '../decide/decide.js';
import { heldFactsOf } from '../hold/held-facts.js';
import { originOf } from '../../core/delivery.js';
import type { Lease } from '../hold/lease.js';
import { claimFor, newToken } from '../run/claim.js';
import { pausedItem } from '../turns/turn.js';
import type { GoodReading } from '../reading.js';
import { unrunSpan } from '../run/span-end.js';
import { BatchRun, runBatch } from './batch-run.js';
import { endedWhileHeld, type HeldItem } from './held-item.js';
import { type Batch, BatchBuffer } from './batches.js';
import { BatchFeeds } from './feeds.js';

/**
 * Batch jobs in the worker: admits their messages (claims each job id, so a completed item that
 * comes back is dropped before batching), holds them in batches by job and key (BatchBuffer), and
 * starts a flush when one is due and the worker has a free handler slot. Items stay invisible under
 * the heartbeat while they wait. Receiving goes on while batches fill, up to `maxHeld` items; at
 * that budget the oldest batch is flushed whatever its size, and further items wait unreceived.
 */
export class Batching {
  readonly #ctx: WorkerContext;
  readonly #activity: Activity;
  readonly #fate: Fate;
  /** Room was freed (a claim ended, lost items left, a flush ended): let the worker dispatch again (it pumps too). */
  readonly #wake: () => void;
  readonly #buffer = new BatchBuffer<HeldItem>();
  /** What the receives said of each queue (told by the walks, read by the receive capacity). */
  readonly feeds: BatchFeeds;
  #claiming = 0;
  readonly #claims = new Set<Promise<void>>();
  /** A held item's lease was aborted (its signal fired, e.g. lost): the next pump looks for lost ones. */
  #aborted = false;
  /** A wake is due on the next turn of the event loop: claims that land together wake the worker once. */
  #wakeSoon = false;
  #flushing = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  /** Every held batch is due now (flushHeld: a Lambda invocation's walks, from its first). */
  #flushHeld = false;
  /** Set at a Lambda invocation's deadline (handBackHeld), until its next: a batch coming back goes back to SQS instead. */
  #cutShort: string | undefined;

  constructor(ctx: WorkerContext, activity: Activity, fate: Fate, wake: () => void) {
    this.#ctx = ctx;
    this.#activity = activity;
    this.#fate = fate;
    this.#wake = wake;
    this.feeds = new BatchFeeds(ctx.config.jobs);
  }

  /** Items held for batch jobs: being claimed, filling batches, or being flushed. */
  get held(): number {
    return this.#claiming + this.#buffer.held + this.#flushing;
  }

  hasRoom(): boolean {
    return this.room() > 0;
  }

  /** How many more batch jobs' messages the worker may hold: the budget less what it holds. */
  room(): number {
    return Math.max(0, this.#ctx.config.maxHeldBatchItems - this.held);
  }

  /** Take a batch job's message: claim its job id, then hold it in its batch (or end it as the claim decides). */
  admit(lease: Lease, read: GoodReading, job: AnyBatchJob): void {
    lease.info = read.info;
    // Before anything can end it: a fan-out child dead-lettered here is still counted in its parent.
    if (this.#ctx.status !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(lease.message));
    let key: string;
    try {
      key = String(job.key(read.args));
    } catch (error) {
      const outcome = poisoned('invalid-args', `key(args) threw: ${toError(error).message}`);
      unrunSpan(this.#ctx, read.info, read, lease.message, outcome);
      this.#fate.conclude(lease, read.info, outcome);
      return;
    }
    this.#claiming++;
    // Held even when the worker began stopping meanwhile: stop() waits for claims, then flushes.
    const claim = claimFor(this.#ctx, lease, read, newToken(), false)
      .then(
        (claimed) => {
          // Paused (its queue, job type or tenant): back to the queue for a while, never held here (not on FIFO: see pausedItem).
          const next = claimed === 'run' ? pausedItem(this.#ctx, lease, read) : claimed;
          if (next !== 'run') {
            unrunSpan(this.#ctx, read.info, read, lease.message, next);
            return this.#fate.conclude(lease, read.info, next);
          }
          this.#buffer.add(job, key, { lease, read, heldAt: lease.receivedAt, queueUrl: lease.message.queueUrl });
          const watcher = {
            onAbort: () => {
              this.#aborted = true;
              this.#wakeOnce();
              if (!lease.lost) lease.whenAborted(watcher); // aborted otherwise (e.g. stopping): still watch for its loss
            },
          };
          if (lease.abortReason === undefined) lease.whenAborted(watcher);
          else watcher.onAbort(); // lost while it was being claimed
        },
        (error: unknown) => {
          this.#ctx.report.onError('batch admit', error);
          this.#fate.conclude(lease, read.info, internalError(toError(error), 0));
        },
      )
      .finally(() => {
        this.#claiming--;
        this.#claims.delete(claim);
        this.#wakeOnce(); // room for another item, and maybe a batch to flush
      });
    this.#claims.add(claim);
  }

  /** Start the flushes that are due, while handler slots are free; arm the timer for the next one. */
  pump(): void {
    if (this.#ctx.stop.signal.aborted) return;
    if (this.#aborted) {
      // Only after a held item's lease was aborted: the scan visits every held item. A lost or
      // cancelled item leaves its batch now, not when the batch is flushed.
      this.#aborted = false;
      const gone = this.#buffer.remove((i) => endedWhileHeld(i) !== undefined);
      for (const item of gone) this.#fate.conclude(item.lease, item.read.info, endedWhileHeld(item)!);
      if (gone.length > 0) this.#wakeOnce(); // their room may let buffered messages in
    }
    const now = Date.now();
    const due = this.#buffer.takeDue(now, (url) => this.feeds.drained(url), this.#flushHeld);
    // At the budget with nothing due, the oldest batch goes now: waiting would stop receiving.
    if (due.length === 0 && !this.hasRoom()) {
      const oldest = this.#buffer.takeOldest(now);
      if (oldest !== undefined) due.push(oldest);
    }
    for (const batch of due) {
      if (this.#canStart()) this.#start(batch);
      else this.#buffer.putBack(batch, 0);
    }
    // A batch due now that found no free slot starts when one frees (the worker pumps again then).
    // At the budget, a batch waiting for its key elsewhere is due again as soon as it may ask.
    const dueAt = this.#buffer.nextDueAt();
    const retryAt = this.hasRoom() ? undefined : this.#buffer.nextRetryAt(now);
    const next = retryAt !== undefined && (dueAt === undefined || retryAt < dueAt) ? retryAt : dueAt;
    this.#arm(next !== undefined && next <= now && !this.#canStart() ? undefined : next);
  }

  /** Flush every held batch, whatever its size, as slots free (a Lambda invocation holds all it will get), once claims land. */
  async flushHeld(): Promise<void> {
    this.#flushHeld = true;
    this.#cutShort = undefined;
    while (this.#claims.size > 0) await Promise.all([...this.#claims]);
    this.pump();
  }

  /** A Lambda invocation's deadline: what is held and not flushed goes back, its receive not counted (cutShort). */
  async handBackHeld(reason: string): Promise<void> {
    this.#cutShort = reason;
    for (const batch of await this.#takeAll())
      for (const item of batch.items) this.#fate.conclude(item.lease, item.read.info, this.#notStarted(item, reason));
  }

  #notStarted(item: HeldItem, reason: string) {
    return cutShort(reason, heldFactsOf(this.#ctx, item.lease), { ran: false, abandoned: false });
  }

  /** Shutdown: once the claims in flight have landed, every filling batch is flushed now if the deadline allows any time, else handed back. */
  async stop(): Promise<void> {
    for (const batch of await this.#takeAll()) {
      if (this.#ctx.config.shutdownTimeoutMs > 0) this.#start(batch);
      else for (const item of batch.items) this.#fate.conclude(item.lease, item.read.info, handedBackNow('worker is stopping'));
    }
  }

  /** Every filling batch, once the claims in flight have landed (the timer disarmed). */
  async #takeAll(): Promise<Batch<HeldItem>[]> {
    this.#arm(undefined);
    while (this.#claims.size > 0) await Promise.all([...this.#claims]);
    return this.#buffer.takeAll();
  }

  #start(batch: Batch<HeldItem>): void {
    const run = new BatchRun(batch);
    const size = batch.items.length;
    this.#flushing += size;
    this.#activity.started(run);
    runBatch(this.#ctx, run)
      .then(
        ({ ended, back }) => {
          for (const r of ended) this.#fate.conclude(r.item.lease, r.info, r.outcome);
          if (back === undefined) return;
          if (this.#ctx.stop.signal.aborted) {
            for (const item of back.items) this.#fate.conclude(item.lease, item.read.info, handedBackNow('worker is stopping'));
          } else if (this.#cutShort !== undefined) {
            for (const item of back.items) this.#fate.conclude(item.lease, item.read.info, this.#notStarted(item, this.#cutShort));
          } else {
            // Its key flushed elsewhere now, its rate's turn far off, or its tenant at its cap: back to fill until then.
            this.#buffer.putBack({ ...batch, items: back.items }, back.retryAt, back.rateSlotAt, back.behind);
            // One lost or cancelled while its batch was out (its pump found nothing to scan): scan again.
            if (back.items.some((i) => endedWhileHeld(i) !== undefined)) this.#aborted = true;
          }
        },
        (error: unknown) => {
          this.#ctx.report.onError('batch', error);
          for (const item of batch.items) this.#fate.conclude(item.lease, item.read.info, internalError(toError(error), 0));
        },
      )
      .finally(() => {
        this.#flushing -= size;
        this.#activity.ended(run);
        this.#wake();
      });
  }

  /** Wake the worker on the next turn of the event loop, once however many ask meanwhile. */
  #wakeOnce(): void {
    if (this.#wakeSoon) return;
    this.#wakeSoon = true;
    setImmediate(() => {
      this.#wakeSoon = false;
      this.#wake();
    });
  }

  /** A flush may start now: the worker is not stopping and a handler slot is free (a flush takes one). */
  #canStart(): boolean {
    return !this.#ctx.stop.signal.aborted && this.#activity.hasFreeSlot();
  }

  /** One timer, for the earliest time a batch turns due (undefined: none). */
  #arm(at: number | undefined): void {
    if (at === this.#timerAt) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = at ?? Number.POSITIVE_INFINITY;
    if (at === undefined) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
  }
}
