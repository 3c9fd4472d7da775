/**
 * The benchmark scenarios of issue 12, each a description of load: bursts enqueued at the start,
 * a trickle of quiet tenants, weights and caps. Counts are multiplied by the scale
 * (FAIRNESS_SCALE=quick is 0.1, full is 1, or a number).
 */

export interface Burst {
  /** The tenant, or with `keys` > 1 the prefix of the keys it spreads over (`S-01` … `S-20`). */
  readonly tenant: string;
  readonly count: number;
  readonly keys?: number;
}

export interface Scenario {
  readonly id: string;
  readonly title: string;
  /** Enqueued at once when the run starts, interleaved when there are several. */
  readonly bursts: readonly Burst[];
  /** Quiet tenants q01…qNN, each enqueueing one job every `everyMs`, until the bursts are done. */
  readonly trickle: { readonly tenants: number; readonly everyMs: number } | undefined;
  /** With no burst: how long the trickle runs (the no-burst baseline). */
  readonly trickleOnlyMs?: number;
  readonly weights?: Readonly<Record<string, number>>;
  /** Most jobs of a key running at once across the whole fleet. */
  readonly caps?: Readonly<Record<string, number>>;
  /** The job's rate limit (fairness on), fleet-wide starts per second. */
  readonly ratePerSecond?: number;
  /** Producer processes sending the bursts between them (default 1; the first also sends the trickle). */
  readonly producers?: number;
}

/** How long the observed rate is measured over, one window after another (issue 21: within 5% over every 10 s). */
export const RATE_WINDOW_MS = 10_000;

export const QUIET_TRICKLE = { tenants: 10, everyMs: 500 } as const;

export function parseScale(text: string | undefined): number {
  if (text === undefined || text === '' || text === 'full') return 1;
  if (text === 'quick') return 0.1;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new Error(`FAIRNESS_SCALE must be quick, full or a number in (0, 1], got "${text}"`);
  return n;
}

export function scenarios(scale: number): Scenario[] {
  const n = (count: number) => Math.max(100, Math.round(count * scale));
  return [
    {
      id: 'baseline',
      title: '0. quiet tenants alone (the no-burst p99)',
      bursts: [],
      trickle: QUIET_TRICKLE,
      trickleOnlyMs: scale < 0.5 ? 6_000 : 12_000,
    },
    {
      id: 'noisy',
      title: '1. noisy burst: A 20,000 at once + quiet trickle',
      bursts: [{ tenant: 'A', count: n(20_000) }],
      trickle: QUIET_TRICKLE,
    },
    {
      id: 'noisy-3p',
      title: '1b. noisy burst sent by 3 producer processes + quiet trickle',
      bursts: [{ tenant: 'A', count: n(20_000) }],
      trickle: QUIET_TRICKLE,
      producers: 3,
    },
    { id: 'uncontended', title: '2. uncontended: only A, 20,000', bursts: [{ tenant: 'A', count: n(20_000) }], trickle: undefined },
    {
      id: 'equal',
      title: '3. equal load: 10 tenants x 2,000',
      bursts: Array.from({ length: 10 }, (_, i) => ({ tenant: `E${String(i + 1).padStart(2, '0')}`, count: n(2_000) })),
      trickle: undefined,
    },
    {
      id: 'two-noisy',
      title: '4. two noisy tenants (10,000 each) + quiet trickle',
      bursts: [
        { tenant: 'A', count: n(10_000) },
        { tenant: 'B', count: n(10_000) },
      ],
      trickle: QUIET_TRICKLE,
    },
    {
      id: 'weights',
      title: '5a. weights A:3 B:1, both backlogged',
      bursts: [
        { tenant: 'A', count: n(12_000) },
        { tenant: 'B', count: n(4_000) },
      ],
      trickle: undefined,
      weights: { A: 3, B: 1 },
    },
    {
      id: 'weights-3',
      title: '5c. weights A:5 B:3 C:1, all backlogged',
      bursts: [
        { tenant: 'A', count: n(10_000) },
        { tenant: 'B', count: n(6_000) },
        { tenant: 'C', count: n(2_000) },
      ],
      trickle: undefined,
      weights: { A: 5, B: 3, C: 1 },
    },
    {
      id: 'cap',
      title: '5b. cap 5 for A across both processes, B backlogged too',
      bursts: [
        { tenant: 'A', count: n(6_000) },
        { tenant: 'B', count: n(6_000) },
      ],
      trickle: undefined,
      caps: { A: 5 },
    },
    {
      id: 'rate',
      title: '7. rate limit 50/s on the job, across both processes',
      // At least two whole 10-s windows of backlog at 50/s, whatever the scale.
      bursts: [{ tenant: 'R', count: Math.max(1_100, Math.round(3_000 * scale)) }],
      trickle: undefined,
      ratePerSecond: 50,
    },
    {
      id: 'sybil',
      title: '6. sybil: one tenant spreads 20,000 over 20 keys + quiet trickle',
      bursts: [{ tenant: 'S', count: n(20_000), keys: 20 }],
      trickle: QUIET_TRICKLE,
    },
  ];
}

/** The keys a burst enqueues under. */
export function burstKeys(b: Burst): string[] {
  const keys = b.keys ?? 1;
  return keys <= 1 ? [b.tenant] : Array.from({ length: keys }, (_, i) => `${b.tenant}-${String(i + 1).padStart(2, '0')}`);
}

export function quietTenants(s: Scenario): string[] {
  return s.trickle === undefined ? [] : Array.from({ length: s.trickle.tenants }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);
}

/** Who a key belongs to for reporting: a sybil's keys are one owner; every other key is its own. */
export function ownerOf(s: Scenario, key: string): string {
  for (const b of s.bursts) if ((b.keys ?? 1) > 1 && key.startsWith(`${b.tenant}-`)) return b.tenant;
  return key;
}
