import { tenantSchema } from '../core/envelope.js';
import { ValidationError } from '../core/errors.js';
import type { Allowances } from '../ports/allowances.js';
import type { PreparedMessage } from './send-many.js';

/**
 * Spillover, at enqueue time: an allowance per key (the tenant, or its `tenantGroup`) decides
 * which queue a job goes to. Within it a key's jobs go to the main queue; what it sends beyond it
 * goes to the spillover queue, which workers poll at a lower weight. A burst of thousands of jobs
 * from one key therefore lands (past its allowance) in spillover, and a quiet key's job on the main
 * queue is not buried behind it. With no contention nothing is lost: workers take whatever queue
 * has work, so a key alone gets the whole fleet either way.
 *
 * With memcached (or an `allowances` port) the allowance is shared by every producer
 * (core/allowance.ts); without it, or while memcached cannot be asked, each process keeps its own
 * token buckets (N producers then give a key up to N times the allowance). Weights scale a key's
 * allowance (weight 3: three times the rate and the burst).
 */
export interface SpilloverSettings {
  /** The spillover queue (`<name>-spill`, from `sqs-jobs queues create --spillover`). */
  readonly queueUrl: string;
  /** Jobs per second per key (times its weight) that may go to the main queue. */
  readonly ratePerSecond: number;
  /** How many jobs per key (times its weight) may go to the main queue at once. */
  readonly burst: number;
  /** By key: the tenant, or with `tenantGroup` the group's name. */
  readonly weights: Readonly<Record<string, number>>;
  /** The key a tenant's jobs are metered under (default: the tenant): one customer's many tenant names share one allowance. */
  readonly tenantGroup?: ((tenant: string) => string) | undefined;
}

/** How long a producer meters on its own after the shared allowances could not be asked. */
const SHARED_RETRY_MS = 10_000;

/** Where each job of a tenant goes: the main queue while its key has allowance, else the spillover queue. */
export class Spillover {
  readonly queueUrl: string;
  readonly #s: SpilloverSettings;
  readonly #local: SpilloverGate;
  readonly #shared: Allowances | undefined;
  /** After the shared store failed to answer, this process meters on its own until then. */
  #sharedAgainAt = 0;

  /** Tenants with a queue of their own (the producer's tenantQueues): never metered, never spilled. */
  readonly #exempt: ReadonlySet<string>;

  constructor(settings: SpilloverSettings, shared: Allowances | undefined, exempt: Iterable<string> = []) {
    this.queueUrl = settings.queueUrl;
    this.#s = settings;
    this.#local = new SpilloverGate(settings);
    this.#shared = shared;
    this.#exempt = new Set(exempt);
  }

  /** The key `tenant`'s jobs are metered under. */
  keyOf(tenant: string): string {
    const group = this.#s.tenantGroup;
    if (group === undefined || this.#exempt.has(tenant)) return tenant;
    const key = group(tenant);
    // A group's name is a tenant name as far as keys go.
    const checked = tenantSchema.safeParse(key);
    if (!checked.success) {
      throw new ValidationError('OPTIONS_INVALID', `spillover.tenantGroup("${tenant}") returned ${JSON.stringify(key)}`, [
        { field: 'options.spillover.tenantGroup', rule: `must return a tenant name: ${checked.error.issues[0]?.message ?? 'a string'}` },
      ]);
    }
    return checked.data;
  }

  /** How many of `count` jobs of `tenant` go to the main queue now (the first ones); the rest spill. */
  async admit(tenant: string, count: number, now: number = Date.now()): Promise<number> {
    // A burst to a tenant's own queue buries only itself.
    if (this.#exempt.has(tenant)) return count;
    const key = this.keyOf(tenant);
    if (this.#shared !== undefined && now >= this.#sharedAgainAt) {
      const weight = this.#local.weightOf(key);
      const got = await this.#shared
        .take(key, count, { perSecond: this.#s.ratePerSecond * weight, burst: Math.max(1, Math.floor(this.#s.burst * weight)) }, now)
        .catch(() => 'unavailable' as const);
      if (got !== 'unavailable') return got;
      // Not asked again for a while: a memcached that does not answer would add its timeout to every send.
      this.#sharedAgainAt = now + SHARED_RETRY_MS;
    }
    return this.#local.take(key, count, now);
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Keys idle long enough to be full again are forgotten beyond this many, so memory stays bounded. */
const MAX_KEYS = 10_000;

/**
 * Of a tenant's messages (all of one send), those within its allowance keep their queue, the rest
 * go to the spillover queue. Without spillover, or jobs without a tenant: unchanged, not metered.
 */
export async function routeSpillover(
  spillover: Spillover | undefined,
  messages: PreparedMessage[],
  tenant: string | undefined,
): Promise<PreparedMessage[]> {
  if (spillover === undefined || tenant === undefined) return messages;
  const within = await spillover.admit(tenant, messages.length);
  return within >= messages.length ? messages : messages.map((m, i) => (i < within ? m : { ...m, queueUrl: spillover.queueUrl }));
}

/** The token buckets of one process: a key's allowance when it is not shared (see Spillover). */
export class SpilloverGate {
  readonly #s: SpilloverSettings;
  readonly #buckets = new Map<string, Bucket>();

  constructor(settings: SpilloverSettings) {
    this.#s = settings;
  }

  /** Take up to `count` tokens of `key`: how many jobs may go to the main queue (the rest spill). */
  take(key: string, count: number, now: number = Date.now()): number {
    let n = 0;
    while (n < count && this.admit(key, now)) n++;
    return n;
  }

  /** Take one job's token for `key`: true when it may go to the main queue, false when it spills. */
  admit(key: string, now: number = Date.now()): boolean {
    const weight = this.weightOf(key);
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
  weightOf(key: string): number {
    return Object.hasOwn(this.#s.weights, key) ? (this.#s.weights[key] ?? 1) : 1;
  }

  #forgetFull(now: number): void {
    for (const [key, b] of this.#buckets) {
      const weight = this.weightOf(key);
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
