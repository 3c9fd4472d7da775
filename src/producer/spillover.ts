/**
 * Spillover, at enqueue time: a token bucket per tenant decides which queue a job goes to. Within its allowance a key's jobs go to the main queue; what it sends beyond it goes to the
 * spillover queue, which workers poll at a lower weight. A burst of thousands of jobs from one key
 * therefore lands (past its allowance) in spillover, and a quiet key's job on the main queue is
 * not buried behind it. With no contention nothing is lost: workers take whatever queue has work,
 * so a key alone gets the whole fleet either way.
 *
 * The buckets live in this process: N producers give a key up to N times the allowance. Weights
 * scale a key's allowance (weight 3: three times the rate and the burst).
 */
export interface SpilloverSettings {
  /** The spillover queue (`<name>-spill`, from `sqs-jobs queues create --spillover`). */
  readonly queueUrl: string;
  /** Jobs per second per key (times its weight) that may go to the main queue. */
  readonly ratePerSecond: number;
  /** How many jobs per key (times its weight) may go to the main queue at once. */
  readonly burst: number;
  readonly weights: Readonly<Record<string, number>>;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Keys idle long enough to be full again are forgotten beyond this many, so memory stays bounded. */
const MAX_KEYS = 10_000;

export class SpilloverGate {
  readonly #s: SpilloverSettings;
  readonly #buckets = new Map<string, Bucket>();

  constructor(settings: SpilloverSettings) {
    this.#s = settings;
  }

  /** Take one job's token for `key`: true when it may go to the main queue, false when it spills. */
  admit(key: string, now: number = Date.now()): boolean {
    const weight = this.#weight(key);
    const capacity = this.#s.burst * weight;
    let b = this.#buckets.get(key);
    if (b === undefined) {
      if (this.#buckets.size >= MAX_KEYS) this.#forgetFull(now);
      b = { tokens: capacity, at: now };
      this.#buckets.set(key, b);
    } else {
      b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * this.#s.ratePerSecond * weight);
      b.at = now;
    }
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Own properties only: a tenant named "constructor" gets weight 1 unless given one. */
  #weight(key: string): number {
    return Object.hasOwn(this.#s.weights, key) ? (this.#s.weights[key] ?? 1) : 1;
  }

  #forgetFull(now: number): void {
    for (const [key, b] of this.#buckets) {
      const weight = this.#weight(key);
      if (b.tokens + ((now - b.at) / 1000) * this.#s.ratePerSecond * weight >= this.#s.burst * weight) this.#buckets.delete(key);
    }
    // Still full of busy keys: drop the oldest rather than grow without bound, a tenth at a time,
    // so the scan above runs once per MAX_KEYS / 10 new keys, not on every one (25,000 keys took
    // 40 s of CPU when it dropped one at a time).
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size < MAX_KEYS - MAX_KEYS / 10) break;
      this.#buckets.delete(key);
    }
  }
}
