/**
 * The printed tables and results/latest.json: every figure of one side beside the other's and
 * their ratio (sqs-jobs ÷ Powertools), medians with their range over the rounds or processes. No
 * figure is judged against a wall-clock threshold: on a shared 2-core machine times move by
 * 20-30% between runs, ratios taken in one run much less.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import type { Side } from './cold.js';
import type { ColdResult } from './cold.js';
import type { CpuResult } from './cpu.js';
import type { SideFailures } from './failure.js';

/** `n` with `d` decimals (trailing zeros dropped) and thousands separators; '-' for NaN. */
export const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toLocaleString('en', { maximumFractionDigits: d }) : '-');
export const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? Number.NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const range = (xs: readonly number[], d: number) => `${f(Math.min(...xs), d)}-${f(Math.max(...xs), d)}`;
const ratio = (a: number, b: number) => (b === 0 ? (a === 0 ? '=' : '-') : `${f(a / b, 2)}×`);
const total = (calls: Record<string, number>) => Object.values(calls).reduce((a, b) => a + b, 0);
/** Calls per record by operation, most first: `PutItem 1 · UpdateItem 1`. */
const byOp = (calls: Record<string, number>) =>
  Object.keys(calls).length === 0
    ? 'none'
    : Object.entries(calls)
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .map(([op, n]) => `${op} ${f(n, 3)}`)
        .join(' · ');

export interface Results {
  readonly quick: boolean;
  readonly scale: Record<string, unknown>;
  readonly cpu: CpuResult;
  readonly failures: { sqsJobs: SideFailures; powertools: SideFailures };
  readonly cold: ColdResult;
  readonly problems: readonly string[];
}

export function report(r: Results): void {
  const { cpu, failures, cold } = r;
  const cpuMed = (s: Side) => median(cpu[s].cpuUsPerRecord);
  const wallMed = (s: Side) => median(cpu[s].wallMsPerInvocation);
  const coldMed = (s: Side, k: 'importMs' | 'firstMs' | 'both') =>
    median(cold.runs[s].map((x) => (k === 'both' ? x.importMs + x.firstMs : x[k])));
  const kb = (s: Side) => cold.bundles[s].bytes / 1024;
  const zodKb = (s: Side) => cold.bundles[s].zod / 1024;
  const callsRow = (label: string, a: Record<string, number>, b: Record<string, number>) =>
    `| ${label} | ${f(total(a), 3)} (${byOp(a)}) | ${f(total(b), 3)} (${byOp(b)}) | ${ratio(total(a), total(b))} |`;
  const coldRow = (label: string, k: 'importMs' | 'firstMs') => {
    const spread = (side: Side) =>
      range(
        cold.runs[side].map((x) => x[k]),
        0,
      );
    const cell = (side: Side) => `${f(coldMed(side, k), 0)} ms (${spread(side)})`;
    return `| ${label} | ${cell('sqsJobs')} | ${cell('powertools')} | ${ratio(coldMed('sqsJobs', k), coldMed('powertools', k))} |`;
  };
  /** Each round's CPU above the floor of that round, per record: a difference of two noisy figures, so its range is wide. */
  const above = (side: Side) => cpu[side].cpuUsPerRecord.map((us, i) => us - cpu.floor[i]!);
  function aboveFloor() {
    const floor = median(cpu.floor);
    const cell = (side: Side) => `${f(median(above(side)), 0)} (the writes: ${f((100 * floor) / cpuMed(side), 0)}% of all)`;
    const [a, b] = [median(above('sqsJobs')), median(above('powertools'))];
    return `| … above the bare writes (floor.ts: ${f(floor, 0)} µs) | ${cell('sqsJobs')} | ${cell('powertools')} | ${ratio(a, b)} |`;
  }
  const load = `load average ${loadavg()[0]!.toFixed(1)} at the end`;
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${load}`;
  const s = r.scale as { warmUpRounds: number; rounds: number; invocations: number; records: number; processes: number };
  const rows = [
    `bench:lambda, ${new Date().toISOString().slice(0, 16).replace('T', ' ')}, ${machine}${r.quick ? ' (--quick)' : ''}`,
    `Success path: ${s.rounds} rounds × ${s.invocations} invocations × ${s.records} no-op records a side, interleaved invocation by invocation; median (range) over rounds.`,
    '',
    '| figure | sqs-jobs `createLambdaHandler` | Powertools batch + idempotency | sqs-jobs ÷ Powertools |',
    '|---|---|---|---|',
    `| CPU µs / record, success | ${f(cpuMed('sqsJobs'), 0)} (${range(cpu.sqsJobs.cpuUsPerRecord, 0)}) | ${f(cpuMed('powertools'), 0)} (${range(cpu.powertools.cpuUsPerRecord, 0)}) | **${f(median(cpu.ratios), 2)}×** (${range(cpu.ratios, 2)}, per round) |`,
    aboveFloor(),
    `| wall ms / invocation of ${s.records}, success | ${f(wallMed('sqsJobs'), 1)} | ${f(wallMed('powertools'), 1)} | ${ratio(wallMed('sqsJobs'), wallMed('powertools'))} |`,
    callsRow('DynamoDB calls / record, success', cpu.sqsJobs.dynamo, cpu.powertools.dynamo),
    callsRow('SQS calls / record, success', cpu.sqsJobs.sqs, cpu.powertools.sqs),
    callsRow('DynamoDB calls / record, failure', failures.sqsJobs.dynamo, failures.powertools.dynamo),
    callsRow('SQS calls / record, failure', failures.sqsJobs.sqs, failures.powertools.sqs),
    `| bundle (esbuild, ESM, minified) | ${f(kb('sqsJobs'), 0)} KB | ${f(kb('powertools'), 0)} KB | ${ratio(kb('sqsJobs'), kb('powertools'))} |`,
    `| … without zod (the args' schema, in both) | ${f(kb('sqsJobs') - zodKb('sqsJobs'), 0)} KB | ${f(kb('powertools') - zodKb('powertools'), 0)} KB | ${ratio(kb('sqsJobs') - zodKb('sqsJobs'), kb('powertools') - zodKb('powertools'))} |`,
    `| cold: import + first invocation of 1, median of ${s.processes} processes | ${f(coldMed('sqsJobs', 'both'), 0)} ms | ${f(coldMed('powertools', 'both'), 0)} ms | **${ratio(coldMed('sqsJobs', 'both'), coldMed('powertools', 'both'))}** |`,
    coldRow('… the import', 'importMs'),
    coldRow('… the first invocation', 'firstMs'),
    '',
    ...(['sqsJobs', 'powertools'] as const).map(
      (side) =>
        `${side === 'sqsJobs' ? 'sqs-jobs' : 'Powertools'} bundle, largest parts: ${cold.bundles[side].largest.map((p) => `${p.part} ${f(p.bytes / 1024, 0)} KB`).join(' · ')}`,
    ),
  ];
  const warm = (side: Side) => byOp(cpu[side].warmUp.sqs);
  rows.push(
    `SQS calls in the warm-up (${s.warmUpRounds} rounds): sqs-jobs ${warm('sqsJobs')} (its first invocation reads its queue's DLQ); Powertools ${warm('powertools')}`,
  );
  console.log(rows.join('\n'));
  mkdirSync('bench/lambda/results', { recursive: true });
  writeFileSync(
    'bench/lambda/results/latest.json',
    `${JSON.stringify({ at: new Date().toISOString(), machine, ...r, medians: medians() }, null, 2)}\n`,
  );

  function medians() {
    const both = (g: (s: Side) => number) => ({ sqsJobs: g('sqsJobs'), powertools: g('powertools') });
    return {
      cpuUsPerRecord: { ...both(cpuMed), floor: median(cpu.floor), ratioPerRound: median(cpu.ratios) },
      cpuUsPerRecordAboveFloor: both((side) => median(above(side))),
      wallMsPerInvocation: both(wallMed),
      bundleKB: both(kb),
      bundleKBWithoutZod: both((side) => kb(side) - zodKb(side)),
      coldMs: both((side) => coldMed(side, 'both')),
      coldImportMs: both((side) => coldMed(side, 'importMs')),
      coldFirstInvocationMs: both((side) => coldMed(side, 'firstMs')),
    };
  }
}
