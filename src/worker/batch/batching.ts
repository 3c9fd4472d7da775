import { randomUUID } from 'node:crypto';
import type { AnyBatchJob } from '../../batch-job.js';
import { toError } from '../../errors.js';
import type { JobInfo } from '../../job-events.js';
import { type BatchRunDeps, BatchRun, type HeldItem, runBatch } from './batch-run.js';
import { type Batch, BatchBuffer } from './batches.js';
import type { Outcome } from '../fate/decide.js';
import type { Lease } from '../hold/lease.js';
import { claimFor, type GoodReading, type RunDeps } from '../run/runner.js';
import { trackingOf } from '../../status/tracker.js';
import { originOf } from '../fate/resend.js';

/** How long a batch whose key is being flushed elsewhere waits before it asks again. */
const BUSY_RETRY_MS = 100;

export interface BatchingDeps {
  readonly run: BatchRunDeps;
  /** What claiming a job id needs, for the queue a message came from. */
  readonly runDeps: (queueUrl: string) => RunDeps;
  /** Items this worker may hold for batch jobs: filling, being claimed and being flushed. */
  readonly maxHeld: number;
  /** A handler may start now (the worker's concurrency has room): a flush takes one. */
  readonly canStart: () => boolean;
  readonly started: (run: BatchRun) => void;
  /** A flush ended (its items' outcomes already handed to `conclude`). */
  readonly ended: (run: BatchRun) => void;
  /** Room was freed (a claim ended, lost items left): let the worker dispatch again (it pumps too). */
  readonly wake: () => void;
  /** The worker's one way to end a message: settle it (and free its FIFO group). */
  readonly conclude: (lease: Lease, info: JobInfo, outcome: Outcome) => void;
  readonly stopping: () => boolean;
  readonly shutdownTimeoutMs: number;
  readonly onError: (where: string, error: unknown) => void;
}

/** Handed back at once, without spending an attempt. */
const release = (reason: string): Outcome => ({ kind: 'release', reason, delaySeconds: 0, abandoned: false });

/**
 * Batch jobs in the worker: admits their messages (claims each job id, so a completed item that
 * comes back is dropped before batching), holds them in batches by job and key (BatchBuffer), and
 * starts a flush when one is due and the worker has a free handler slot. Items stay invisible under
 * the heartbeat while they wait. Receiving goes on while batches fill, up to `maxHeld` items; at
 * that budget the oldest batch is flushed whatever its size, and further items wait unreceived.
 */
export class Batching {
  readonly #d: BatchingDeps;
  readonly #buffer = new BatchBuffer<HeldItem>();
  /** Queues whose last receive brought fewer messages than asked: nothing more is waiting there now. */
  readonly #drained = new Set<string>();
  #claiming = 0;
  readonly #claims = new Set<Promise<void>>();
  readonly #claimDepsByQueue = new Map<string, RunDeps>();
  #flushing = 0;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;

  constructor(deps: BatchingDeps) {
    this.#d = deps;
  }

  /** Items held for batch jobs: being claimed, filling batches, or being flushed. */
  get held(): number {
    return this.#claiming + this.#buffer.held + this.#flushing;
  }

  hasRoom(): boolean {
    return this.held < this.#d.maxHeld;
  }

  /** A receive on `queueUrl` asked for `asked` messages and got `got`. */
  received(queueUrl: string, asked: number, got: number): void {
    if (got < asked) this.#drained.add(queueUrl);
    else this.#drained.delete(queueUrl);
  }

  /** Take a batch job's message: claim its job id, then hold it in its batch (or end it as the claim decides). */
  admit(lease: Lease, read: GoodReading, job: AnyBatchJob): void {
    lease.info = read.info;
    const runDeps = this.#claimDeps(lease.message.queueUrl);
    // Before anything can end it: a fan-out child dead-lettered here is still counted in its parent.
    if (runDeps.status !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(lease.message));
    let key: string;
    try {
      key = String(job.key(read.args));
    } catch (error) {
      const detail = `key(args) threw: ${toError(error).message}`;
      this.#d.conclude(lease, read.info, { kind: 'dead-letter', reason: 'invalid-args', detail });
      return;
    }
    this.#claiming++;
    const claim = claimFor(runDeps, lease, read, randomUUID())
      .then(
        (next) => {
          if (next !== 'run') return this.#d.conclude(lease, read.info, next);
          // Held even when the worker began stopping meanwhile: stop() waits for claims, then flushes.
          this.#buffer.add(job, key, { lease, read, heldAt: lease.receivedAt, queueUrl: lease.message.queueUrl });
        },
        (error: unknown) => {
          this.#d.onError('batch admit', error);
          this.#d.conclude(lease, read.info, release(`internal error: ${toError(error).message}`));
        },
      )
      .finally(() => {
        this.#claiming--;
        this.#claims.delete(claim);
        this.#d.wake(); // room for another item, and maybe a batch to flush
      });
    this.#claims.add(claim);
  }

  /** A queue's RunDeps for claims: never "stopping", since a claimed item is held and flushed by stop(). */
  #claimDeps(queueUrl: string): RunDeps {
    let deps = this.#claimDepsByQueue.get(queueUrl);
    if (deps === undefined) {
      deps = { ...this.#d.runDeps(queueUrl), stopping: () => false };
      this.#claimDepsByQueue.set(queueUrl, deps);
    }
    return deps;
  }

  /** Start the flushes that are due, while handler slots are free; arm the timer for the next one. */
  pump(): void {
    if (this.#d.stopping()) return;
    const lost = this.#buffer.remove((i) => i.lease.lost);
    for (const item of lost) {
      this.#d.conclude(item.lease, item.read.info, {
        kind: 'lost',
        reason: 'the lease was lost while it waited in its batch',
        abandoned: false,
      });
    }
    if (lost.length > 0) setImmediate(this.#d.wake); // their room may let buffered messages in
    const now = Date.now();
    const due = this.#buffer.takeDue(now, (url) => this.#drained.has(url));
    // At the budget with nothing due, the oldest batch goes now: waiting would stop receiving.
    if (due.length === 0 && !this.hasRoom()) {
      const oldest = this.#buffer.takeOldest(now);
      if (oldest !== undefined) due.push(oldest);
    }
    for (const batch of due) {
      if (this.#d.canStart()) this.#start(batch);
      else this.#buffer.putBack(batch, 0);
    }
    // A batch due now that found no free slot starts when one frees (the worker pumps again then).
    // At the budget, a batch waiting for its key elsewhere is due again as soon as it may ask.
    const dueAt = this.#buffer.nextDueAt();
    const retryAt = this.hasRoom() ? undefined : this.#buffer.nextRetryAt(now);
    const next = retryAt !== undefined && (dueAt === undefined || retryAt < dueAt) ? retryAt : dueAt;
    this.#arm(next !== undefined && next <= now && !this.#d.canStart() ? undefined : next);
  }

  /**
   * Shutdown: once the claims in flight have landed, every filling batch is flushed now if the
   * deadline allows any time, else handed back at once.
   */
  async stop(): Promise<void> {
    this.#arm(undefined);
    while (this.#claims.size > 0) await Promise.all([...this.#claims]);
    for (const batch of this.#buffer.takeAll()) {
      if (this.#d.shutdownTimeoutMs > 0) this.#start(batch);
      else for (const item of batch.items) this.#d.conclude(item.lease, item.read.info, release('worker is stopping'));
    }
  }

  #start(batch: Batch<HeldItem>): void {
    const run = new BatchRun(batch);
    const size = batch.items.length;
    this.#flushing += size;
    this.#d.started(run);
    runBatch(this.#d.run, run)
      .then(
        (result) => {
          if (result !== 'busy') {
            for (const r of result) this.#d.conclude(r.item.lease, r.info, r.outcome);
          } else if (this.#d.stopping()) {
            for (const item of batch.items) this.#d.conclude(item.lease, item.read.info, release('worker is stopping'));
          } else {
            this.#buffer.putBack(batch, Date.now() + BUSY_RETRY_MS);
          }
        },
        (error: unknown) => {
          this.#d.onError('batch', error);
          for (const item of batch.items)
            this.#d.conclude(item.lease, item.read.info, release(`internal error: ${toError(error).message}`));
        },
      )
      .finally(() => {
        this.#flushing -= size;
        this.#d.ended(run);
      });
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
