import { type DrainMeter, HELD_PERIOD_MS, heldPeriodOf } from '../ports/drain-meter.js';

/** Per queue URL, the messages this worker holds received and not started. */
type HeldNow = () => Iterable<readonly [queueUrl: string, held: number]>;

/**
 * What this worker tells producers' admission (src/producer/admission/), once per `flushMs`:
 *   - the messages it deleted, per queue: one memcached call per queue per flush, whatever the rate;
 *   - the messages it holds unstarted, per queue (see `watch`): added once per held period, at the
 *     period's first flush, so each period's sum counts every live worker once.
 */
export class DrainTally {
  readonly #meter: DrainMeter;
  readonly #flushMs: number;
  readonly #now: () => number;
  readonly #counts = new Map<string, number>();
  #held: HeldNow | undefined;
  /** The held period this worker last added to. */
  #heldPeriod: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(meter: DrainMeter, flushMs: number, now: () => number = Date.now) {
    // Each held period must see a flush, even one a little late.
    if (flushMs > HELD_PERIOD_MS / 2) throw new RangeError(`DrainTally: flushMs must be <= ${HELD_PERIOD_MS / 2}`);
    this.#meter = meter;
    this.#flushMs = flushMs;
    this.#now = now;
  }

  /** `count` messages of `queueUrl` were deleted. */
  count(queueUrl: string, count: number): void {
    this.#counts.set(queueUrl, (this.#counts.get(queueUrl) ?? 0) + count);
    this.#start();
  }

  /** Report what `held` says this worker holds, from now until close. */
  watch(held: HeldNow): void {
    this.#held = held;
    this.#start();
  }

  /** Add what was counted since the last flush, and what is held if a new period began (and wait for the adds before it). */
  flush(): Promise<void> {
    const counts = [...this.#counts];
    this.#counts.clear();
    const period = heldPeriodOf(this.#now());
    // Once per period, and never again for one already added to (a clock stepped back).
    const due = this.#held !== undefined && (this.#heldPeriod === undefined || period > this.#heldPeriod);
    const held = due ? [...this.#held!()] : [];
    if (due) this.#heldPeriod = period;
    // A meter should not reject; one that does loses those counts (the rate reads low for a moment), nothing more.
    const adds = () =>
      Promise.all([
        ...counts.map(([url, n]) => this.#meter.add(url, n).catch(() => {})),
        ...held.map(([url, n]) => this.#meter.addHeld(url, period, n).catch(() => {})),
      ]);
    this.#flushing = this.#flushing.then(adds).then(() => {});
    return this.#flushing;
  }

  /** Stop the timer and add the deletes left (shutdown, before the memcached client closes); held is no longer reported. */
  close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#held = undefined;
    return this.flush();
  }

  #start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.flush(), this.#flushMs);
    this.#timer.unref();
  }
}
