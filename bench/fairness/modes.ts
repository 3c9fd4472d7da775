/**
 * Every way of running a scenario, as the one adapter `fairnessOptions(mode, scenario)`: which
 * queues to create, where producers send each tenant's jobs, and what the worker is given.
 *
 *   off         today: one queue, tenant as MessageGroupId (ElasticMQ ignores it)
 *   on          sqs-jobs' fairness: createProducer({ spillover }) spills a tenant's excess (its group's:
 *               a sybil's S-01 … S-20 are one) to <name>-spill, over allowances shared by every
 *               producer on the workers' memcached
 *   hash        producer-side: N shard queues, a tenant's jobs go to shard hash(tenant) % N
 *   shuffle     producer-side: each tenant has 2 of N shards, sends to the shorter (cached depth)
 *   per-tenant  one queue per tenant (the isolation reference; needs every tenant known up front)
 *   sorter      a sorter process moves each key's excess over a token bucket from an intake
 *               queue to a spillover queue; workers prefer the main queue. It runs ahead of the
 *               producers (part of the enqueue path)
 *   sorter-late the same sorter, started with the workers: the burst is already buried in the
 *               intake queue, as it would be for a worker that sorts what it receives
 *   spill       the sorter's rule applied by the producer itself: a key's jobs over its token
 *               bucket are sent straight to the spillover queue (no extra hop). One producer here;
 *               a fleet of producers would share the buckets (e.g. memcached counters per second)
 */
import type { WorkerOptions } from '../../src/index.js';
import { burstKeys, quietTenants, type Scenario } from './scenarios.js';

export const MODES = ['off', 'on', 'hash', 'shuffle', 'per-tenant', 'sorter', 'sorter-late', 'spill'] as const;
export type Mode = (typeof MODES)[number];

export type Route =
  | { readonly kind: 'one'; readonly queue: string }
  | { readonly kind: 'hash'; readonly shards: readonly string[]; readonly seed: number }
  | {
      readonly kind: 'shuffle';
      readonly shards: readonly string[];
      readonly choices: number;
      readonly depthTtlMs: number;
      readonly seed: number;
    }
  | { readonly kind: 'per-tenant'; readonly queueOf: Readonly<Record<string, string>> }
  | { readonly kind: 'spill'; readonly main: string; readonly spill: string; readonly perKeyPerSecond: number; readonly burst: number };

export interface SorterSettings {
  readonly intake: string;
  readonly main: string;
  readonly spill: string;
  /** Each key may send this many jobs per second to the main queue (its token bucket)… */
  readonly perKeyPerSecond: number;
  /** …and this many at once; the rest of its jobs go to the spillover queue. */
  readonly burst: number;
  /** Receive loops in the sorter process. */
  readonly loops: number;
  /** Whether it starts before the producers send the bursts, or with the workers (after them). */
  readonly startsWith: 'producers' | 'workers';
}

export interface FairnessSetup {
  /** Queue roles to create (each with its DLQ); URLs are passed to `worker` by role. */
  readonly queues: readonly string[];
  readonly route: Route;
  /** Options for createWorker beyond jobs, endpoint, concurrency and logging (queues included). */
  worker(urls: Readonly<Record<string, string>>): Partial<WorkerOptions> & Record<string, unknown>;
  /** Enqueue options beyond `{ tenant }`. */
  enqueue(tenant: string): Record<string, unknown>;
  /** Options for createProducer beyond queueUrl, client and jobs (e.g. a spillover queue); none when omitted. */
  producer?(urls: Readonly<Record<string, string>>): Record<string, unknown>;
  readonly sorter?: SorterSettings;
  /** The job's rate limit (defineJob's rateLimit), when the scenario has one and the mode applies it. */
  readonly rateLimit?: { readonly perSecond: number };
}

/** FAIRNESS_SHARDS shard queues; FAIRNESS_SHARD_SEED picks another tenant-to-shard mapping. */
const SHARDS = Number(process.env.FAIRNESS_SHARDS ?? 8);
const SEED = Number(process.env.FAIRNESS_SHARD_SEED ?? 0);
const shardNames = Array.from({ length: SHARDS }, (_, i) => `s${i}`);

/**
 * A worker reserves up to 10 slots for each open long poll, so with many queues the idle polls on
 * empty queues would hold every slot: give it room for one receive per queue beside `concurrency`.
 */
const prefetchFor = (queues: number) => Number(process.env.FAIRNESS_PREFETCH ?? Math.max(10, 10 * queues));

const one = (name: string) => ({ kind: 'one', queue: name }) as const;

export function fairnessOptions(mode: Mode, scenario: Scenario): FairnessSetup {
  switch (mode) {
    case 'off':
      return { queues: ['main'], route: one('main'), worker: (u) => ({ queues: [u.main!] }), enqueue: () => ({}) };
    case 'on': {
      // sqs-jobs' own fairness: the producer's per-tenant token bucket sends a tenant's excess to
      // the spillover queue; the worker polls both, preferring main; caps are the worker's
      // fleet-wide per-tenant limit (memcached slots). A tenant with a weight has a queue of its own
      // (tenantQueues), which the worker polls with that weight.
      const weighted = Object.entries(scenario.weights ?? {});
      return {
        queues: ['main', 'spill', ...weighted.map(([t]) => `w-${t}`)],
        route: one('main'),
        worker: (u) => ({
          queues: [
            { url: u.main!, weight: 4 },
            { url: u.spill!, weight: 1 },
            ...weighted.map(([t, weight]) => ({ url: u[`w-${t}`]!, weight })),
          ],
          prefetch: prefetchFor(2 + weighted.length),
          ...(scenario.caps ? { tenantCaps: scenario.caps, capDelaySeconds: 1 } : {}),
        }),
        enqueue: () => ({}),
        ...(scenario.ratePerSecond === undefined ? {} : { rateLimit: { perSecond: scenario.ratePerSecond } }),
        producer: (u) => ({
          spillover: {
            queueUrl: u.spill!,
            ratePerSecond: 20,
            burst: 20,
            // One customer's many names (the sybil's S-01 … S-20) are metered as one.
            tenantGroup: (tenant: string) => tenant.replace(/-\d+$/, ''),
          },
          tenantQueues: Object.fromEntries(weighted.map(([t]) => [t, u[`w-${t}`]!])),
        }),
      };
    }
    case 'hash':
      return {
        queues: shardNames,
        route: { kind: 'hash', shards: shardNames, seed: SEED },
        worker: (u) => ({ queues: shardNames.map((s) => u[s]!), prefetch: prefetchFor(SHARDS) }),
        enqueue: () => ({}),
      };
    case 'shuffle':
      return {
        queues: shardNames,
        route: { kind: 'shuffle', shards: shardNames, choices: 2, depthTtlMs: 1_000, seed: SEED },
        worker: (u) => ({ queues: shardNames.map((s) => u[s]!), prefetch: prefetchFor(SHARDS) }),
        enqueue: () => ({}),
      };
    case 'per-tenant': {
      const tenants = [...scenario.bursts.flatMap(burstKeys), ...quietTenants(scenario)];
      const queueOf = Object.fromEntries(tenants.map((t, i) => [t, `t${i}`]));
      const names = Object.values(queueOf);
      return {
        queues: names,
        route: { kind: 'per-tenant', queueOf },
        // The worker's queue weights stand in for tenant weights here.
        worker: (u) => ({
          queues: tenants.map((t) => ({ url: u[queueOf[t]!]!, weight: scenario.weights?.[t] ?? 1 })),
          prefetch: prefetchFor(names.length),
        }),
        enqueue: () => ({}),
      };
    }
    case 'spill':
      return {
        queues: ['main', 'spill'],
        route: { kind: 'spill', main: 'main', spill: 'spill', perKeyPerSecond: 20, burst: 20 },
        worker: (u) => ({
          queues: [
            { url: u.main!, weight: 4 },
            { url: u.spill!, weight: 1 },
          ],
          prefetch: prefetchFor(2),
        }),
        enqueue: () => ({}),
      };
    case 'sorter':
    case 'sorter-late':
      return {
        queues: ['intake', 'main', 'spill'],
        route: one('intake'),
        worker: (u) => ({
          queues: [
            { url: u.main!, weight: 4 },
            { url: u.spill!, weight: 1 },
          ],
          prefetch: prefetchFor(2),
        }),
        enqueue: () => ({}),
        sorter: {
          intake: 'intake',
          main: 'main',
          spill: 'spill',
          perKeyPerSecond: 20,
          burst: 20,
          loops: 8,
          startsWith: mode === 'sorter' ? 'producers' : 'workers',
        },
      };
  }
}
