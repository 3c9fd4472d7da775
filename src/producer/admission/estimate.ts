import type { QueueCounts } from '../../ports/queue-admin.js';

/** What an estimate reads, on a timer: the queue's counts (SQS) and the workers' drain count (memcached). */
export interface EstimatePorts {
  counts(queueUrl: string): Promise<QueueCounts>;
  /** The drain meter's count for the queue; undefined when there is none (no worker counts there). */
  drained(queueUrl: string): Promise<number | undefined>;
}

/** How much busy time the first capacity is measured over (the workers add their counts once a second). */
const FIRST_SPAN_MS = 3_000;

interface Sample {
  readonly at: number;
  /** Messages not yet started: visible and delayed. */
  readonly backlog: number;
  readonly drained: number | undefined;
}

/** A queue as admission sees it now. */
export interface QueueView {
  /** Messages not yet started (visible and delayed), projected from the last sample to now. */
  readonly backlog: number;
  /** Messages per second the workers take off the queue when they have work: undefined until measured. */
  readonly capacity: number | undefined;
}

/**
 * One queue's backlog and drain capacity, from samples taken every `sampleMs` (one SQS call and
 * one memcached read each, however many jobs are enqueued). The drain rate is the drain count's
 * rise over the last `windowMs`; it measures the workers' capacity only while they had work all
 * window long (a backlog at every sample), since an idle fleet drains only what arrives. So the
 * capacity is the rate of the last such window, or a higher rate seen since (more workers), and
 * unknown until work has waited for 3 s (the first capacity is measured over that much). Between samples the backlog is projected: the sampled one,
 * plus what this producer sent since, less what the capacity drained meanwhile.
 */
export class QueueEstimate {
  readonly #ports: EstimatePorts;
  readonly #queueUrl: string;
  readonly #windowMs: number;
  readonly #samples: Sample[] = [];
  #capacity: number | undefined;
  /** Sent by this producer since the last sample was asked for. */
  #sentSince = 0;

  constructor(ports: EstimatePorts, queueUrl: string, windowMs: number) {
    this.#ports = ports;
    this.#queueUrl = queueUrl;
    this.#windowMs = windowMs;
  }

  /** Take one sample (the sampler's timer calls this). Never rejects: a failed read leaves the last estimate. */
  async sample(now: () => number = Date.now): Promise<void> {
    const sentBefore = this.#sentSince;
    let counts: QueueCounts;
    let drained: number | undefined;
    try {
      [counts, drained] = await Promise.all([this.#ports.counts(this.#queueUrl), this.#ports.drained(this.#queueUrl)]);
    } catch {
      return;
    }
    this.#sentSince -= sentBefore; // the sample counts what was sent before it was asked for
    const sample: Sample = { at: now(), backlog: counts.visible + counts.delayed, drained };
    const last = this.#samples.at(-1);
    // A counter that went down restarted (evicted): the window starts again.
    if (last?.drained !== undefined && (drained === undefined || drained < last.drained)) this.#samples.length = 0;
    this.#samples.push(sample);
    while (this.#samples.length > 2 && sample.at - this.#samples[1]!.at >= this.#windowMs) this.#samples.shift();
    this.#measure();
  }

  /** This producer sent `n` messages to the queue (counted in the backlog until the next sample sees them). */
  sent(n: number): void {
    this.#sentSince += n;
  }

  view(now: number = Date.now()): QueueView | undefined {
    const last = this.#samples.at(-1);
    if (last === undefined) return undefined;
    const drainedSince = this.#capacity === undefined ? 0 : (this.#capacity * Math.max(0, now - last.at)) / 1000;
    return { backlog: Math.max(0, last.backlog + this.#sentSince - drainedSince), capacity: this.#capacity };
  }

  #measure(): void {
    const first = this.#samples[0]!;
    const last = this.#samples.at(-1)!;
    const spanMs = last.at - first.at;
    // The first capacity as soon as FIRST_SPAN_MS of work waiting is seen (admission's warm-up is
    // everything admitted until then); the whole window after that.
    const needMs = this.#capacity === undefined ? Math.min(FIRST_SPAN_MS, this.#windowMs) : this.#windowMs;
    if (first.drained === undefined || last.drained === undefined || spanMs < needMs) return;
    const rate = ((last.drained - first.drained) * 1000) / spanMs;
    const busy = this.#samples.every((s) => s.backlog > 0);
    if (busy) this.#capacity = rate;
    else if (this.#capacity !== undefined && rate > this.#capacity) this.#capacity = rate;
  }
}
