import type { ExtendResult, JobLock } from '../../ports/lock.js';
import type { Permits } from '../../ports/permits.js';
import type { QueuePort } from '../../ports/queue.js';
import type { ReceivedMessage } from '../../core/message.js';
import { groupByQueue, inBatches } from '../../core/sqs-batch.js';
import { SQS_MAX_HOLD_MS as MAX_HOLD_MS } from '../../core/sqs-limits.js';
import { Lease } from './lease.js';

interface HeartbeatOptions {
  readonly sqs: QueuePort;
  readonly lock: JobLock;
  readonly permits?: Permits | undefined;
  readonly visibilityTimeoutSeconds: number;
  readonly intervalMs: number;
  readonly lockTtlSeconds: number;
  readonly maxHoldMs?: number;
  readonly onError: (error: unknown) => void;
  /** A lease was lost (its signal has fired with LEASE_LOST): for logs and events. */
  readonly onLost: (lease: Lease, reason: string) => void;
}

/**
 * Keeps every held message invisible with one timer for the whole worker: on each tick, all
 * leases due before the next tick are extended together, in ChangeMessageVisibilityBatch calls
 * of up to 10, and their locks are touched. A tick waits for the last tick's visibility
 * extensions, never for its lock extensions.
 */
export class Heartbeat {
  readonly #o: HeartbeatOptions;
  readonly #leases = new Set<Lease>();
  readonly #tickMs: number;
  readonly #maxHoldMs: number;
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  /** Each lease's lock extension in flight, if any (close waits for them). */
  readonly #locking = new Map<Lease, Promise<void>>();
  #emptyWaiters: (() => void)[] = [];

  constructor(options: HeartbeatOptions) {
    this.#o = options;
    this.#tickMs = Math.max(50, Math.min(1_000, Math.floor(options.intervalMs / 4)));
    this.#maxHoldMs = options.maxHoldMs ?? MAX_HOLD_MS;
  }

  /** Start holding a message just received. */
  hold(message: ReceivedMessage, receivedAt: number = Date.now()): Lease {
    const lease = new Lease(message, receivedAt, this.#o.visibilityTimeoutSeconds, this.#o.intervalMs);
    this.#leases.add(lease);
    return lease;
  }

  get size(): number {
    return this.#leases.size;
  }

  /** Resolves once it holds no message (every one settled, handed back or lost): a Lambda invocation's end. */
  empty(): Promise<void> {
    if (this.#leases.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#emptyWaiters.push(resolve));
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.#tick ??= this.tick()
        .catch((error: unknown) => this.#o.onError(error)) // e.g. a custom JobLock that throws
        .finally(() => {
          this.#tick = undefined;
        });
    }, this.#tickMs);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#tick;
    await Promise.all([...this.#locking.values()]);
  }

  /** Extend every lease due before the next tick. Public for tests; the timer calls it. */
  async tick(now: number = Date.now()): Promise<void> {
    const due: { lease: Lease; seconds: number }[] = [];
    for (const lease of this.#leases) {
      if (lease.lost) continue;
      if (now >= lease.visibleAt) {
        this.#lose(lease, 'the visibility timeout passed before the heartbeat could extend it');
        continue;
      }
      if (lease.nextExtendAt > now + this.#tickMs) continue;
      const holdLeftMs = lease.receivedAt + this.#maxHoldMs - now;
      if (holdLeftMs <= this.#o.intervalMs + this.#tickMs) {
        lease.nextExtendAt = Number.POSITIVE_INFINITY;
        lease.abort('JOB_TIMEOUT', 'the message has been held for nearly 12 hours, the most SQS allows; the attempt is abandoned');
        continue;
      }
      due.push({ lease, seconds: Math.min(this.#o.visibilityTimeoutSeconds, Math.floor(holdLeftMs / 1000) - 1) });
    }
    if (due.length === 0) return;
    // The next tick waits for this tick's visibility extensions only. A lock extension is not
    // waited for: memcached answering slowly must not delay the next visibility extension past the
    // timeout. A lease whose last lock extension is still in flight is not asked again meanwhile.
    const visibility = this.#extendVisibility(due, now);
    for (const d of due) {
      const lease = d.lease;
      if (lease.lock === undefined && lease.permit === undefined && !this.#locking.has(lease)) {
        lease.pending = visibility; // nothing to extend in memcached
        void visibility.then(() => {
          if (lease.pending === visibility) lease.pending = undefined;
        });
        continue;
      }
      let lock = this.#locking.get(lease);
      if (lock === undefined) {
        lock = this.#extendLock(lease).finally(() => this.#locking.delete(lease));
        this.#locking.set(lease, lock);
      }
      // pending: everything in flight for the lease (settle waits for it before acting).
      const work = Promise.all([visibility, lock]).then(() => {});
      lease.pending = work;
      void work.then(() => {
        if (lease.pending === work) lease.pending = undefined;
      });
    }
    await visibility;
  }

  /**
   * Stop heartbeating a lease and wait for any extension already in flight, so that nothing the
   * heartbeat sends can land after (and undo) what the caller does next.
   */
  async stopHolding(lease: Lease): Promise<void> {
    this.#let(lease);
    await lease.pending;
  }

  async #extendVisibility(due: { lease: Lease; seconds: number }[], now: number): Promise<void> {
    await Promise.all(
      [...groupByQueue(due.map((d) => ({ ...d, message: d.lease.message })))].map(async ([queueUrl, list]) => {
        const failed = await inBatches(list, (batch) =>
          this.#o.sqs.changeVisibilityBatch(
            queueUrl,
            batch.map((d, i) => ({ id: String(i), receiptHandle: d.lease.message.receiptHandle, visibilityTimeout: d.seconds })),
          ),
        );
        const failures = new Map(failed.map((f) => [f.item, f.failure]));
        for (const d of list) {
          const failure = failures.get(d);
          if (failure === undefined) {
            d.lease.visibleAt = now + d.seconds * 1000;
            d.lease.nextExtendAt = now + this.#o.intervalMs;
          } else if (failure.kind === 'lease-lost') {
            this.#lose(d.lease, `SQS refused the extension: ${failure.code} ${failure.message}`.trim());
          } else {
            // transient: the lease stays due and is tried again next tick
            this.#o.onError(
              new Error(`visibility extension failed for message ${d.lease.message.messageId}: ${failure.code} ${failure.message}`),
            );
          }
        }
      }),
    );
  }

  /** Extend the lease's tenant permit and job lock (never throws). */
  async #extendLock(lease: Lease): Promise<void> {
    const permit = lease.permit;
    if (permit !== undefined) {
      // Permits should not throw; one that does must not keep the job id's lock from being extended.
      await this.#o.permits
        ?.extend(permit.key, permit.index, permit.token, this.#o.lockTtlSeconds)
        .catch((error: unknown) => this.#o.onError(error));
    }
    const lock = lease.lock;
    if (lock === undefined) return;
    let result: ExtendResult;
    try {
      result = await this.#o.lock.extend(lock.jobId, lock.token, this.#o.lockTtlSeconds);
    } catch (error) {
      this.#o.onError(error); // a JobLock should answer 'unavailable', not throw; either way, not lost
      return;
    }
    if (result === 'lost') this.#lose(lease, 'the dedupe lock is held by another consumer');
    // Not lost: the message is still this worker's, to be settled as cancelled once the handler stops.
    if (result === 'cancelled') lease.abort('CANCELLED', `job ${lock.jobId} was cancelled`);
  }

  #lose(lease: Lease, reason: string): void {
    // A lease no longer tracked is being settled: its fate is decided, nothing is lost.
    if (lease.lost || !this.#leases.has(lease)) return;
    this.#let(lease);
    lease.abort('LEASE_LOST', `lease lost: ${reason}`);
    this.#o.onLost(lease, reason);
  }

  #let(lease: Lease): void {
    this.#leases.delete(lease);
    if (this.#leases.size === 0) for (const wake of this.#emptyWaiters.splice(0)) wake();
  }
}
