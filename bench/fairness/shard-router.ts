/**
 * Producer-side routing: which queue a tenant's next jobs go to. Hash sharding sends a tenant to
 * one of N shards; shuffle sharding gives each tenant its own `choices` of N shards and sends to
 * the one with the fewest messages, by a depth read at most every `depthTtlMs` (one
 * GetQueueAttributes per shard per refresh) plus what this producer sent since. Spill sends what a
 * key has beyond its token bucket to the spillover queue.
 */
import { createHash } from 'node:crypto';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Route } from './modes.js';

function hash(text: string, salt: string): number {
  return createHash('sha1').update(`${salt}:${text}`).digest().readUInt32BE(0);
}

/** `choices` distinct shard indexes for a tenant, stable across runs and processes for one seed. */
export function shardsOf(tenant: string, shards: number, choices: number, seed = 0): number[] {
  const picked: number[] = [];
  for (let salt = 0; picked.length < Math.min(choices, shards); salt++) {
    const i = hash(tenant, `${seed}:${salt}`) % shards;
    if (!picked.includes(i)) picked.push(i);
  }
  return picked;
}

export class ShardRouter {
  readonly #route: Route;
  readonly #urls: Readonly<Record<string, string>>;
  readonly #sqs: SQSClient;
  /** Shuffle: depth per shard at the last refresh, plus what we sent since. */
  #depth = new Map<string, number>();
  #readAt = 0;
  #refreshing: Promise<void> | undefined;
  /** Spill: each key's token bucket. */
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(route: Route, urls: Readonly<Record<string, string>>, sqs: SQSClient) {
    this.#route = route;
    this.#urls = urls;
    this.#sqs = sqs;
  }

  /** The queue URL for the next `count` jobs of `tenant`. */
  async queueFor(tenant: string, count: number): Promise<string> {
    const r = this.#route;
    switch (r.kind) {
      case 'one':
        return this.#urls[r.queue]!;
      case 'per-tenant':
        return this.#urls[r.queueOf[tenant]!]!;
      case 'hash':
        return this.#urls[r.shards[shardsOf(tenant, r.shards.length, 1, r.seed)[0]!]!]!;
      case 'spill':
        return this.#urls[this.#admit(tenant, count, r.perKeyPerSecond, r.burst) ? r.main : r.spill]!;
      case 'shuffle': {
        if (Date.now() - this.#readAt > r.depthTtlMs) {
          this.#refreshing ??= this.#refresh(r.shards).finally(() => (this.#refreshing = undefined));
          if (this.#readAt === 0) await this.#refreshing; // the first time only; later a stale depth is fine
        }
        const candidates = shardsOf(tenant, r.shards.length, r.choices, r.seed).map((i) => r.shards[i]!);
        const best = candidates.reduce((a, b) => ((this.#depth.get(b) ?? 0) < (this.#depth.get(a) ?? 0) ? b : a));
        this.#depth.set(best, (this.#depth.get(best) ?? 0) + count);
        return this.#urls[best]!;
      }
    }
  }

  /** Take `count` tokens from the key's bucket if it has them (a chunk goes whole to one queue). */
  #admit(key: string, count: number, perSecond: number, burst: number): boolean {
    const now = Date.now();
    const b = this.#buckets.get(key) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * perSecond);
    b.at = now;
    this.#buckets.set(key, b);
    if (b.tokens < count) return false;
    b.tokens -= count;
    return true;
  }

  async #refresh(shards: readonly string[]): Promise<void> {
    const depths = await Promise.all(
      shards.map(async (s) => {
        const out = await this.#sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: this.#urls[s]!, AttributeNames: ['ApproximateNumberOfMessages'] }),
        );
        return [s, Number(out.Attributes?.ApproximateNumberOfMessages ?? 0)] as const;
      }),
    );
    this.#depth = new Map(depths);
    this.#readAt = Date.now();
  }
}
