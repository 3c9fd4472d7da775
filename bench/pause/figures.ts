/** Small number helpers for the report. */

/** The p-th percentile (0..100) of `xs`, nearest rank; NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const median = (xs: readonly number[]) => percentile(xs, 50);

export interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly n: number;
}

export const spread = (xs: readonly number[]): Spread => ({
  p50: percentile(xs, 50),
  p99: percentile(xs, 99),
  max: percentile(xs, 100),
  n: xs.length,
});

/** `n` with `d` decimals and thousands separators; '-' for NaN. */
export const f = (n: number, d = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-';

/** Milliseconds as `p50 / p99 / max ms`. */
export const ms = (s: Spread) => `${f(s.p50)} / ${f(s.p99)} / ${f(s.max)} ms`;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
