/**
 * The drain meter: what producers' admission reads about each queue from the workers, where every
 * producer can read it.
 *   - **Drained**: how many messages the workers have taken off the queue (deleted once done). A
 *     producer derives the drain rate from two reads some seconds apart, so the count may start
 *     anywhere and may reset (an evicted counter restarts): a reader takes a count lower than the
 *     last as a restart.
 *   - **Held**: how many messages the workers have received and will start before a job sent now
 *     (their prefetch: not those parked for a tenant cap or a rate limit, not a batch job's items,
 *     which fill batches of their own). SQS counts them in flight, with the running ones, but a job
 *     sent now waits for them too. Each worker adds what it holds once per period (see
 *     heldPeriodOf), so a period's sum, read once the period is over, is the fleet's; a worker that
 *     died adds nothing to the next period. A period's sum may be dropped a minute after it began.
 *     Periods are reckoned from each process's clock: readers allow for a few seconds of skew.
 *   - **Kept capacity**: the drain capacity a producer last measured for the queue, with when, so a
 *     producer that starts later (a deploy, a scale-out) starts from it instead of from nothing.
 *     The last one kept wins; it may be dropped (evicted) at any time.
 */
export interface DrainMeter {
  /** Add `count` messages deleted from `queueUrl`. Never rejects: a lost add makes the rate read low for a moment. */
  add(queueUrl: string, count: number): Promise<void>;
  /** The count so far; undefined when there is none yet (no worker has added to it) or it cannot be read. */
  read(queueUrl: string): Promise<number | undefined>;
  /** Add `count` messages of `queueUrl` one worker holds unstarted to `period`'s sum. Never rejects. */
  addHeld(queueUrl: string, period: number, count: number): Promise<void>;
  /** `period`'s sum; undefined when no worker added to it (none held any), it expired, or it cannot be read. */
  readHeld(queueUrl: string, period: number): Promise<number | undefined>;
  /** Keep `capacity` as the queue's last measured drain capacity. Never rejects: a lost one leaves the one before. */
  keepCapacity(queueUrl: string, capacity: KeptCapacity): Promise<void>;
  /** The capacity last kept for the queue; undefined when none was, it was dropped, or it cannot be read. */
  keptCapacity(queueUrl: string): Promise<KeptCapacity | undefined>;
}

/** A drain capacity as measured: messages per second the workers took off the queue while work waited, and when (ms since the epoch). */
export interface KeptCapacity {
  readonly perSecond: number;
  readonly at: number;
}

/** How long a held period lasts: at least twice the workers' flush (1 s), so each worker adds to every period. */
export const HELD_PERIOD_MS = 3_000;

/** The held period `at` (ms since the epoch) falls in: whole periods since the epoch, so every process agrees. */
export function heldPeriodOf(at: number): number {
  return Math.floor(at / HELD_PERIOD_MS);
}

/** A capacity worth keeping (and a kept one worth reading): a finite rate >= 0 and a time. */
export function isCapacity(c: KeptCapacity): boolean {
  return Number.isFinite(c.perSecond) && c.perSecond >= 0 && Number.isSafeInteger(c.at);
}
