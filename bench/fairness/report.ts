/**
 * The table: per scenario, the issue's goal beside each mode's figure and its ratio to fairness off.
 * A ✓ or ✗ follows a figure that has a goal. With several rounds a figure is their median.
 */
import type { RunResult } from './run-one.js';

interface Row {
  readonly scenario: string;
  readonly figure: string;
  readonly goal: string;
  readonly value: (r: RunResult) => number | undefined;
  readonly unit: 's' | 'x' | '/s' | 'n' | 'calls' | '%';
  /** Whether the goal is met, given the figure, the same mode's no-burst baseline and fairness off. */
  readonly met?: (v: number, ctx: { baselineP99: number | undefined; off: number | undefined }) => boolean;
}

const quietP99 = (r: RunResult) => r.figures?.quiet?.p99;
/** The workers' send calls: here a worker sends nothing but re-sends (a deferral), so 0 means nothing was re-sent. */
const resends = (byAction: Readonly<Record<string, number>>) => (byAction.SendMessage ?? 0) + (byAction.SendMessageBatch ?? 0);
const quietBound = (v: number, c: { baselineP99: number | undefined }) =>
  v <= 2_000 && (c.baselineP99 === undefined || v <= 3 * c.baselineP99);

const ROWS: Row[] = [
  { scenario: 'baseline', figure: 'quiet wait p99, no burst', goal: 'reference', value: quietP99, unit: 's' },
  { scenario: 'noisy', figure: 'quiet wait p99', goal: '<= 2 s and <= 3x no-burst p99', value: quietP99, unit: 's', met: quietBound },
  { scenario: 'noisy', figure: 'quiet wait p50', goal: '', value: (r) => r.figures?.quiet?.p50, unit: 's' },
  {
    scenario: 'noisy-3p',
    figure: 'quiet wait p99',
    goal: '<= 2 s and <= 3x no-burst p99',
    value: quietP99,
    unit: 's',
    met: quietBound,
  },
  {
    scenario: 'noisy-3p',
    figure: 'quiet tenants with p99 > 2 s',
    goal: '0',
    value: (r) => r.figures?.quiet?.tenantsOver2s,
    unit: 'n',
    met: (v) => v === 0,
  },
  {
    scenario: 'noisy',
    figure: 'quiet tenants with p99 > 2 s',
    goal: '0',
    value: (r) => r.figures?.quiet?.tenantsOver2s,
    unit: 'n',
    met: (v) => v === 0,
  },
  {
    scenario: 'noisy',
    figure: 'A finishes after',
    goal: '<= 1.05x off',
    value: (r) => r.figures?.owners.A?.finishMs,
    unit: 's',
    met: (v, c) => c.off === undefined || v <= 1.05 * c.off,
  },
  {
    scenario: 'uncontended',
    figure: 'throughput',
    goal: '>= 0.97x off',
    value: (r) => r.figures?.throughput,
    unit: '/s',
    met: (v, c) => c.off === undefined || v >= 0.97 * c.off,
  },
  { scenario: 'uncontended', figure: 'worker SQS calls / job', goal: 'report', value: (r) => r.calls?.worker, unit: 'calls' },
  { scenario: 'uncontended', figure: 'producer SQS calls / job', goal: 'report', value: (r) => r.calls?.producer, unit: 'calls' },
  { scenario: 'uncontended', figure: 'sorter SQS calls / job', goal: 'report', value: (r) => r.calls?.sorter, unit: 'calls' },
  {
    scenario: 'equal',
    figure: "Jain's index, worst window",
    goal: '>= 0.99',
    value: (r) => r.figures?.jain?.min,
    unit: 'x',
    met: (v) => v >= 0.99,
  },
  { scenario: 'equal', figure: "Jain's index, mean", goal: '', value: (r) => r.figures?.jain?.mean, unit: 'x' },
  {
    scenario: 'two-noisy',
    figure: 'slower/faster noisy rate',
    goal: '>= 0.90',
    value: (r) => r.figures?.rateRatio,
    unit: 'x',
    met: (v) => v >= 0.9,
  },
  { scenario: 'two-noisy', figure: 'quiet wait p99', goal: '<= 2 s and <= 3x no-burst p99', value: quietP99, unit: 's', met: quietBound },
  {
    scenario: 'weights',
    figure: 'A:B completions, both busy',
    goal: '3 +/- 10%',
    value: (r) => r.figures?.shareRatio,
    unit: 'x',
    met: (v) => v >= 2.7 && v <= 3.3,
  },
  ...(['weights', 'weights-3'] as const).flatMap((scenario): Row[] => [
    {
      scenario,
      figure: 'completions vs weights, worst owner of the worst window',
      goal: '<= 10%',
      value: (r: RunResult) => (r.figures?.weightWindows === undefined ? undefined : 100 * r.figures.weightWindows.worstError),
      unit: '%',
      met: (v: number) => v <= 10,
    },
    {
      scenario,
      figure: 'weighted Jain index, worst window',
      goal: '>= 0.95',
      value: (r: RunResult) => r.figures?.weightWindows?.worstJain,
      unit: 'x',
      met: (v: number) => v >= 0.95,
    },
  ]),
  {
    scenario: 'cap',
    figure: 'A running at once, most',
    goal: '<= 5',
    value: (r) => r.figures?.owners.A?.maxConcurrent,
    unit: 'n',
    met: (v) => v <= 5,
  },
  {
    scenario: 'rate',
    figure: 'starts/s, slowest 10 s window',
    goal: '50 +/- 5%',
    value: (r) => r.figures?.rateWindows?.slowest,
    unit: 'x',
    met: (v) => v >= 47.5 && v <= 52.5,
  },
  {
    scenario: 'rate',
    figure: 'starts/s, fastest 10 s window',
    goal: '50 +/- 5%',
    value: (r) => r.figures?.rateWindows?.fastest,
    unit: 'x',
    met: (v) => v >= 47.5 && v <= 52.5,
  },
  {
    scenario: 'rate',
    figure: 'worker send calls (re-sends)',
    goal: '0',
    value: (r) => (r.calls === undefined ? undefined : resends(r.calls.workerByAction)),
    unit: 'n',
    met: (v) => v === 0,
  },
  { scenario: 'rate', figure: 'worker SQS calls / job', goal: 'report', value: (r) => r.calls?.worker, unit: 'calls' },
  { scenario: 'sybil', figure: 'quiet wait p99', goal: 'report', value: quietP99, unit: 's' },
  { scenario: 'sybil', figure: 'quiet tenants with p99 > 2 s', goal: 'report', value: (r) => r.figures?.quiet?.tenantsOver2s, unit: 'n' },
];

function fmt(v: number | undefined, unit: Row['unit']): string {
  if (v === undefined || Number.isNaN(v)) return '-';
  switch (unit) {
    case 's':
      return `${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
    case '/s':
      return `${v.toFixed(0)}/s`;
    case 'calls':
      return v.toFixed(3);
    case 'n':
      return String(v);
    case 'x':
      return v.toFixed(3);
    case '%':
      return `${v.toFixed(1)}%`;
  }
}

function median(xs: number[]): number | undefined {
  const v = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  return v.length % 2 === 1 ? v[(v.length - 1) / 2]! : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
}

export function table(results: readonly RunResult[], modes: readonly string[]): string {
  const runs = (s: string, m: string) => results.filter((r) => r.scenario === s && r.mode === m);
  const figure = (row: Row, s: string, m: string) => median(runs(s, m).flatMap((r) => row.value(r) ?? []));
  const rounds = Math.max(...modes.map((m) => runs('noisy', m).length), 1);
  const lines = [`| scenario | figure | goal | ${modes.join(' | ')} |`, `|---|---|---|${modes.map(() => '---').join('|')}|`];
  for (const row of ROWS) {
    if (!results.some((r) => r.scenario === row.scenario)) continue;
    const offValue = figure(row, row.scenario, 'off');
    const cells = modes.map((m) => {
      const rs = runs(row.scenario, m);
      if (rs.length === 0) return '';
      if (rs.every((r) => r.status === 'unavailable')) return 'n/a';
      const v = figure(row, row.scenario, m);
      if (v === undefined) return '-';
      const baselineP99 = median(runs('baseline', m).flatMap((r) => quietP99(r) ?? []));
      const mark = row.met ? (row.met(v, { baselineP99, off: offValue }) ? ' ✓' : ' ✗') : '';
      const ratio = m !== 'off' && offValue && row.unit !== 'n' && row.unit !== '%' ? ` (${(v / offValue).toFixed(2)}x)` : '';
      return `${fmt(v, row.unit)}${ratio}${mark}${rs.some((r) => r.status === 'incomplete') ? ' (incomplete)' : ''}`;
    });
    lines.push(`| ${row.scenario} | ${row.figure} | ${row.goal} | ${cells.join(' | ')} |`);
  }
  const attempts = modes.map((m) =>
    results.filter((r) => r.mode === m).reduce((n, r) => n + (r.figures?.attemptsAbove1 ?? 0) + (r.figures?.duplicates ?? 0), 0),
  );
  lines.push(`| all | jobs run twice or with attempt > 1 | 0 | ${attempts.map((n) => `${n}${n === 0 ? ' ✓' : ' ✗'}`).join(' | ')} |`);
  const notes = results.filter((r) => r.note).map((r) => `- ${r.scenario} / ${r.mode}: ${r.note}`);
  const head = rounds > 1 ? [`(median of ${rounds} rounds)`, ''] : [];
  return [...head, ...lines, ...(notes.length ? ['', ...notes] : [])].join('\n');
}
