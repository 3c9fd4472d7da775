/**
 * From one run's effects log to its figures: wait percentiles per tenant and for the quiet tenants
 * together, finish times, Jain's fairness index over windows while every backlogged owner has work,
 * completion-rate ratios, most jobs running at once per owner (across both processes).
 */
import type { Effect } from './effects.js';
import { burstKeys, ownerOf, RATE_WINDOW_MS, type Scenario } from './scenarios.js';

export interface OwnerFigures {
  readonly jobs: number;
  readonly waitP50: number;
  readonly waitP99: number;
  readonly waitMax: number;
  /** Last handler end, ms after the run started. */
  readonly finishMs: number;
  readonly maxConcurrent: number;
}

export interface RunFigures {
  readonly jobs: number;
  readonly duplicates: number;
  /** Jobs that ran with ctx.attempt > 1 (a deferral must never cause one). */
  readonly attemptsAbove1: number;
  /** Jobs per second from the first handler start to the last handler end. */
  readonly throughput: number;
  readonly owners: Readonly<Record<string, OwnerFigures>>;
  readonly quiet:
    | { readonly jobs: number; readonly p50: number; readonly p99: number; readonly max: number; readonly tenantsOver2s: number }
    | undefined;
  readonly jain: { readonly windowMs: number; readonly windows: number; readonly min: number; readonly mean: number } | undefined;
  /** Slowest over fastest completion rate of the burst owners while all have work (1 = equal). */
  readonly rateRatio: number | undefined;
  /** First burst owner's completions over the second's while both have work (weights scenario). */
  readonly shareRatio: number | undefined;
  /** Starts per second in each whole RATE_WINDOW_MS from the first start (rate scenario): the slowest and fastest window. */
  readonly rateWindows: { readonly windows: number; readonly slowest: number; readonly fastest: number } | undefined;
  /**
   * With weights, over each whole window while every burst owner has work: how far an owner's share
   * of the completions strays from its weight's share (|share / weight share − 1|), the worst
   * owner of the worst window; and the weighted Jain index of the worst window.
   */
  readonly weightWindows:
    | { readonly windowMs: number; readonly windows: number; readonly worstError: number; readonly worstJain: number }
    | undefined;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const sortNum = (xs: number[]) => xs.sort((a, b) => a - b);
const waitOf = (e: Effect) => e.start - e.enqueuedAt;

function maxConcurrent(effects: readonly Effect[]): number {
  const events = effects.flatMap((e) => [[e.start, 1] as const, [e.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, d] of events) {
    now += d;
    most = Math.max(most, now);
  }
  return most;
}

function ownerFigures(effects: readonly Effect[], t0: number): OwnerFigures {
  const waits = sortNum(effects.map(waitOf));
  return {
    jobs: effects.length,
    waitP50: percentile(waits, 50),
    waitP99: percentile(waits, 99),
    waitMax: waits.at(-1) ?? Number.NaN,
    finishMs: effects.reduce((most, e) => Math.max(most, e.end), 0) - t0,
    maxConcurrent: maxConcurrent(effects),
  };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const list = m.get(k);
    if (list === undefined) m.set(k, [x]);
    else list.push(x);
  }
  return m;
}

export function analyse(s: Scenario, effects: readonly Effect[], t0: number, windowMs: number, weightWindowMs = windowMs): RunFigures {
  const byOwner = groupBy(effects, (e) => ownerOf(s, e.key));
  const owners = Object.fromEntries([...byOwner].map(([o, es]) => [o, ownerFigures(es, t0)]));
  const burstOwners = s.bursts.map((b) => b.tenant).filter((o) => byOwner.has(o));
  const quietEffects = effects.filter((e) => /^q\d+$/.test(e.key));
  const quietWaits = sortNum(quietEffects.map(waitOf));
  const quietByTenant = groupBy(quietEffects, (e) => e.key);
  const span =
    (effects.reduce((most, e) => Math.max(most, e.end), 0) - effects.reduce((least, e) => Math.min(least, e.start), Infinity)) / 1000;

  // While every burst owner has work: from the start to the earliest owner's last completion.
  const allBusyUntil = Math.min(...burstOwners.map((o) => t0 + owners[o]!.finishMs));
  const completionsIn = (o: string, from: number, to: number) => byOwner.get(o)!.filter((e) => e.end >= from && e.end < to).length;
  const weight = (o: string) => s.weights?.[o] ?? 1;

  let jain: RunFigures['jain'];
  if (burstOwners.length >= 2) {
    const indexes: number[] = [];
    for (let from = t0; from + windowMs <= allBusyUntil; from += windowMs) {
      const x = burstOwners.map((o) => completionsIn(o, from, from + windowMs) / weight(o));
      const sum = x.reduce((a, b) => a + b, 0);
      const squares = x.reduce((a, b) => a + b * b, 0);
      if (squares > 0) indexes.push((sum * sum) / (x.length * squares));
    }
    if (indexes.length > 0)
      jain = { windowMs, windows: indexes.length, min: Math.min(...indexes), mean: indexes.reduce((a, b) => a + b, 0) / indexes.length };
  }
  let weightWindows: RunFigures['weightWindows'];
  if (s.weights !== undefined && burstOwners.length >= 2) {
    const totalWeight = burstOwners.reduce((sum, o) => sum + weight(o), 0);
    let worstError = 0;
    let worstJain = 1;
    let windows = 0;
    for (let from = t0; from + weightWindowMs <= allBusyUntil; from += weightWindowMs) {
      const done = burstOwners.map((o) => completionsIn(o, from, from + weightWindowMs));
      const all = done.reduce((a, b) => a + b, 0);
      if (all === 0) continue;
      windows++;
      burstOwners.forEach((o, i) => {
        worstError = Math.max(worstError, Math.abs(done[i]! / all / (weight(o) / totalWeight) - 1));
      });
      const x = burstOwners.map((o, i) => done[i]! / weight(o));
      const sum = x.reduce((a, b) => a + b, 0);
      worstJain = Math.min(worstJain, (sum * sum) / (x.length * x.reduce((a, b) => a + b * b, 0)));
    }
    if (windows > 0) weightWindows = { windowMs: weightWindowMs, windows, worstError, worstJain };
  }
  const rates = burstOwners.map((o) => completionsIn(o, t0, allBusyUntil) / weight(o));
  const ids = new Set<string>();
  let duplicates = 0;
  for (const e of effects)
    if (ids.has(e.jobId)) duplicates++;
    else ids.add(e.jobId);

  return {
    jobs: effects.length,
    duplicates,
    attemptsAbove1: effects.filter((e) => e.attempt > 1).length,
    throughput: effects.length / span,
    owners,
    quiet:
      quietEffects.length === 0
        ? undefined
        : {
            jobs: quietEffects.length,
            p50: percentile(quietWaits, 50),
            p99: percentile(quietWaits, 99),
            max: quietWaits.at(-1)!,
            tenantsOver2s: [...quietByTenant.values()].filter((es) => percentile(sortNum(es.map(waitOf)), 99) > 2_000).length,
          },
    jain,
    rateRatio: burstOwners.length >= 2 && Math.max(...rates) > 0 ? Math.min(...rates) / Math.max(...rates) : undefined,
    rateWindows: s.ratePerSecond === undefined ? undefined : startRates(effects),
    weightWindows,
    shareRatio:
      burstOwners.length === 2
        ? completionsIn(burstOwners[0]!, t0, allBusyUntil) / Math.max(1, completionsIn(burstOwners[1]!, t0, allBusyUntil))
        : undefined,
  };
}

/** Starts per second in each whole window between the first start and the last. */
function startRates(effects: readonly Effect[]): RunFigures['rateWindows'] {
  const starts = effects.map((e) => e.start).sort((a, b) => a - b);
  if (starts.length === 0) return undefined;
  const first = starts[0]!;
  const rates: number[] = [];
  for (let from = first; from + RATE_WINDOW_MS <= starts.at(-1)!; from += RATE_WINDOW_MS) {
    const n = starts.filter((t) => t >= from && t < from + RATE_WINDOW_MS).length;
    rates.push(n / (RATE_WINDOW_MS / 1000));
  }
  if (rates.length === 0) return undefined;
  return { windows: rates.length, slowest: Math.min(...rates), fastest: Math.max(...rates) };
}

/** Points for the chart: per key, the longest wait among its jobs started in each second of the run. */
export function waitSeries(s: Scenario, effects: readonly Effect[], t0: number): { key: string; t: number; wait: number }[] {
  const burstKeySet = new Set(s.bursts.flatMap(burstKeys));
  const worst = new Map<string, number>();
  for (const e of effects) {
    const key = burstKeySet.has(e.key) ? ownerOf(s, e.key) : e.key;
    const id = `${key}\u0000${Math.floor((e.start - t0) / 1000)}`;
    worst.set(id, Math.max(worst.get(id) ?? 0, waitOf(e)));
  }
  return [...worst].map(([id, wait]) => {
    const [key, second] = id.split('\u0000');
    return { key: key!, t: Number(second), wait: Math.max(0.001, wait / 1000) };
  });
}
