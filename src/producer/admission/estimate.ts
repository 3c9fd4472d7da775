import { heldPeriodOf, type KeptCapacity } from '../../ports/drain-meter.js';
import type { QueueCounts } from '../../ports/queue-admin.js';

/** What an estimate reads, on a timer: the queue's counts (SQS) and what the workers report (memcached). */
export interface EstimatePorts {
  counts(queueUrl: string): Promise<QueueCounts>;
  /** The drain meter's count for the queue; undefined when there is none (no worker counts there). */
  drained(queueUrl: string): Promise<number | undefined>;
  /** The messages of the queue the workers held unstarted in a held period (DrainMeter.readHeld). */
  held(queueUrl: string, period: number): Promise<number | undefined>;
  /** The capacity last kept for the queue by any producer (DrainMeter.keptCapacity). */
  kept(queueUrl: string): Promise<KeptCapacity | undefined>;
  /** Keep a capacity measured here for producers that start later (DrainMeter.keepCapacity). */
  keep(queueUrl: string, capacity: KeptCapacity): Promise<void>;
}

/** How much busy time the first capacity is measured over (the workers add their counts once a second). */
const FIRST_SPAN_MS = 3_000;

/** A window with fewer deletes than this says too little to lower the capacity (slow jobs): it grows, up to LONGEST_WINDOW_MS. */
const MIN_DELETES = 5;
const LONGEST_WINDOW_MS = 60_000;

/** A kept capacity younger than this was measured by a producer running now: taken as it is. */
const FRESH_KEPT_MS = 60_000;
/**
 * An older kept capacity is taken at this share until this producer measures one: the fleet may
 * have shrunk since (half keeps the SLA through a halving), and half of a right one still keeps
 * the workers busy (the backlog stays above zero), so nothing is lost but some of the headroom.
 */
const OLD_KEPT_SHARE = 0.5;
/** How often a producer keeps the capacity it measures, at most (one memcached set). */
const KEEP_EVERY_MS = 10_000;

interface Sample {
  readonly at: number;
  /** Messages not yet started: visible, delayed, and held by the workers. */
  readonly backlog: number;
  /** The part of it the workers hold unstarted. */
  readonly held: number;
  /** Work the workers had to take: visible, or held by them unstarted (delayed messages are not, yet). */
  readonly waiting: number;
  readonly drained: number | undefined;
}

/**
 * Where a capacity comes from: `measured` here while work waited; before that, `kept` (the last
 * one any producer kept, taken whole when fresh, at half when older) or `drained` (the most the
 * workers were seen to drain, which they can at least do), the larger of the two; `none` yet.
 */
export type CapacityBasis = 'measured' | 'kept' | 'drained' | 'none';

/** A queue as admission sees it now. */
export interface QueueView {
  /** Messages not yet started (visible, delayed, and held unstarted by the workers), projected from the last sample to now. */
  readonly backlog: number;
  /** Of the backlog, what the workers held unstarted at the last sample (their prefetch). */
  readonly held: number;
  /** Messages per second the workers take off the queue when they have work, as well as known (`basis`); undefined with none. */
  readonly capacity: number | undefined;
  readonly basis: CapacityBasis;
}

/**
 * One queue's backlog and drain capacity, from samples taken every `sampleMs` (one SQS call and
 * three memcached reads each, however many jobs are enqueued). The backlog is every message not yet
 * started: SQS's visible and delayed ones, and those the workers received and hold unstarted
 * (SQS counts them in flight, but a job sent now waits for them too), as the workers reported them
 * for the last two whole held periods (the larger: a few seconds of clock skew lose nothing). The drain rate is the drain count's
 * rise over the last `windowMs`; it measures the workers' capacity only while they had work all
 * window long (visible, or held unstarted by them, at every sample), since an idle fleet drains only what arrives. So the
 * capacity is the rate of the last such window, or a higher rate seen since (more workers), and
 * unknown until work has waited for 3 s (the first capacity is measured over that much). A window
 * with fewer than 5 deletes grows until it has them (slow jobs), up to a minute: a fleet that
 * deleted nothing for a minute while work waited has capacity 0. Between samples the backlog is projected: the sampled one,
 * plus what this producer sent since, less what the capacity drained meanwhile.
 */
export class QueueEstimate {
  readonly #ports: EstimatePorts;
  readonly #queueUrl: string;
  readonly #windowMs: number;
  readonly #samples: Sample[] = [];
  #capacity: number | undefined;
  /** Until #capacity is measured: the most the workers drained over a window (they can do at least that), and the kept capacity as taken. */
  #drained: number | undefined;
  #kept: number | undefined;
  /** The first sample reads the kept capacity too; undefined once it did. */
  #readKept = true;
  #keptAt = 0;
  /** Admitted by this producer and not yet answered by SQS: counted in the backlog meanwhile. */
  #sending = 0;
  /** Sent by this producer since the last sample was asked for. */
  #sentSince = 0;
  /** The sample under way: one at a time, however slow SQS answers. */
  #sampling: Promise<void> | undefined;

  constructor(ports: EstimatePorts, queueUrl: string, windowMs: number) {
    this.#ports = ports;
    this.#queueUrl = queueUrl;
    this.#windowMs = windowMs;
  }

  /** Take one sample (the sampler's timer calls this); one already under way is waited for instead. Never rejects. */
  sample(now: () => number = Date.now): Promise<void> {
    this.#sampling ??= this.#sample(now).finally(() => {
      this.#sampling = undefined;
    });
    return this.#sampling;
  }

  async #sample(now: () => number): Promise<void> {
    const sentBefore = this.#sentSince;
    let counts: QueueCounts;
    let drained: number | undefined;
    let held: number | undefined;
    try {
      [counts, drained, held] = await Promise.all([
        this.#ports.counts(this.#queueUrl),
        this.#ports.drained(this.#queueUrl),
        this.#held(heldPeriodOf(now())),
        this.#readKept ? this.#takeKept(now) : undefined,
      ]);
    } catch {
      return;
    }
    this.#sentSince -= sentBefore; // the sample counts what was sent before it was asked for
    // The workers' reports are up to two periods old: what SQS counts in flight now (running and
    // held) bounds them, so a fleet that has just run dry is not seen holding work.
    const heldNow = Math.min(held, counts.inFlight);
    const backlog = counts.visible + counts.delayed + heldNow;
    const sample: Sample = { at: now(), backlog, held: heldNow, waiting: counts.visible + heldNow, drained };
    const last = this.#samples.at(-1);
    // A counter that went down restarted (evicted): the window starts again.
    if (last?.drained !== undefined && (drained === undefined || drained < last.drained)) this.#samples.length = 0;
    this.#samples.push(sample);
    // Samples from before the first count measure nothing; then the window, as long as it must be.
    while (this.#samples.length > 1 && this.#samples[0]!.drained === undefined) this.#samples.shift();
    while (this.#samples.length > 2 && this.#enough(this.#samples[1]!, sample)) this.#samples.shift();
    this.#measure();
  }

  /**
   * What the workers held in the last whole period before `period`, or the one before it, whichever
   * is more: a producer whose clock runs a few seconds ahead of the workers' reads a period they are
   * still adding to (or have not begun). 0 when neither can be read: a lost read only makes the
   * backlog read low for a moment, as before held was counted.
   */
  async #held(period: number): Promise<number> {
    const read = (p: number) =>
      this.#ports.held(this.#queueUrl, p).then(
        (n) => (n !== undefined && Number.isSafeInteger(n) && n > 0 ? n : 0),
        () => 0,
      );
    const [last, before] = await Promise.all([read(period - 1), read(period - 2)]);
    return Math.max(last, before);
  }

  /** The kept capacity, as taken until one is measured here (whole when fresh, else OLD_KEPT_SHARE of it). A failed read keeps none. */
  async #takeKept(now: () => number): Promise<void> {
    const kept = await this.#ports.kept(this.#queueUrl).catch(() => undefined);
    this.#readKept = false;
    if (kept !== undefined) this.#kept = kept.perSecond * (now() - kept.at < FRESH_KEPT_MS ? 1 : OLD_KEPT_SHARE);
  }

  /**
   * This producer admitted `n` messages for the queue: counted in the backlog from now, not from
   * when SQS answers the send (under load, many sends are out at once).
   */
  sending(n: number): void {
    this.#sending += n;
  }

  /** Of those, `n` were sent (counted until the next sample sees them); `failed` were not. */
  sent(n: number, failed = 0): void {
    this.#sending = Math.max(0, this.#sending - n - failed);
    this.#sentSince += n;
  }

  /** The backlog and capacity now; before the first sample, the backlog is what this producer sent. */
  view(now: number = Date.now()): QueueView {
    const { capacity, basis } = this.#known();
    const last = this.#samples.at(-1);
    const drainedSince = last === undefined || capacity === undefined ? 0 : (capacity * Math.max(0, now - last.at)) / 1000;
    const backlog = Math.max(0, (last?.backlog ?? 0) + this.#sentSince - drainedSince) + this.#sending;
    return { backlog, held: last?.held ?? 0, capacity, basis };
  }

  #known(): { capacity: number | undefined; basis: CapacityBasis } {
    if (this.#capacity !== undefined) return { capacity: this.#capacity, basis: 'measured' };
    const kept = this.#kept ?? -1;
    const drained = this.#drained ?? -1;
    if (kept < 0 && drained < 0) return { capacity: undefined, basis: 'none' };
    return kept >= drained ? { capacity: kept, basis: 'kept' } : { capacity: drained, basis: 'drained' };
  }

  /** Whether the window from `from` to `to` is long enough to measure over (so anything older can go). */
  #enough(from: Sample, to: Sample): boolean {
    const spanMs = to.at - from.at;
    if (spanMs >= LONGEST_WINDOW_MS) return true;
    const deletes = from.drained === undefined || to.drained === undefined ? 0 : to.drained - from.drained;
    return spanMs >= this.#windowMs && deletes >= MIN_DELETES;
  }

  #measure(): void {
    const first = this.#samples[0]!;
    const last = this.#samples.at(-1)!;
    const spanMs = last.at - first.at;
    // The first capacity as soon as FIRST_SPAN_MS of work waiting is seen (admission's warm-up is
    // everything admitted until then); the whole window after that.
    const needMs = this.#capacity === undefined ? Math.min(FIRST_SPAN_MS, this.#windowMs) : this.#windowMs;
    if (first.drained === undefined || last.drained === undefined || spanMs < needMs) return;
    const deletes = last.drained - first.drained;
    // Few deletes in a short window: slow jobs, not stopped workers (that takes LONGEST_WINDOW_MS to say).
    if (deletes < MIN_DELETES && spanMs < LONGEST_WINDOW_MS) return;
    const rate = (deletes * 1000) / spanMs;
    const busy = this.#samples.every((s) => s.waiting > 0);
    if (busy) this.#capacity = rate;
    else if (this.#capacity !== undefined && rate > this.#capacity) this.#capacity = rate;
    else if (this.#capacity === undefined) this.#drained = Math.max(this.#drained ?? 0, rate);
    // Kept for the producers to come: the capacity measured, else the most seen drained (a floor:
    // when the backlog never builds in the queue itself, the workers absorbing it, it is all there is).
    const known = this.#capacity ?? this.#drained;
    if (known !== undefined && last.at - this.#keptAt >= KEEP_EVERY_MS) {
      this.#keptAt = last.at;
      void this.#ports.keep(this.#queueUrl, { perSecond: known, at: Math.round(last.at) }).catch(() => {});
    }
  }
}
