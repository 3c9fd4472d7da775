/** The calls of a slice of the log, per enqueue or per run, as table cells; prices as bench/schedules uses them. */
import { PRICE } from '../schedules/counted.js';
import type { Call } from './counting.js';

export { PRICE };

/** `n` with `d` decimals (trailing zeros dropped) and thousands separators; '-' for NaN. */
export const f = (n: number, d = 2) => (Number.isFinite(n) ? n.toLocaleString('en', { maximumFractionDigits: d }) : '-');

const REFUSED = new Set(['ConditionalCheckFailed', 'TransactionCanceled']);

/** A call's name in the tables: its command, what it was made on (DynamoDB's item kind or index family), refused or not. */
function nameOf(c: Call): string {
  if (c.service === 'sqs') return c.op === 'ReceiveMessage' && c.outcome === 'empty' ? 'ReceiveMessage (empty)' : c.op;
  const on = c.op === 'Query' ? c.on.replace(/^.*:/, '') : c.on;
  const how = c.op === 'Query' && c.outcome === 'empty' ? ' (empty)' : REFUSED.has(c.outcome) ? ' (refused)' : '';
  return `${c.op} ${on}${how}`;
}

/** Calls by name, each divided by `per`, most first: `GetItem key 1 · UpdateItem timed 0.98`. */
export function byCommand(calls: readonly Call[], per: number): string {
  if (calls.length === 0) return '0';
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(nameOf(c), (counts.get(nameOf(c)) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([name, n]) => `${name} ${f(n / per)}`)
    .join(' · ');
}

export interface Cost {
  readonly dynamo: number;
  readonly sqs: number;
  readonly write: number;
  readonly read: number;
  /** Units by AWS's rule rather than DynamoDB Local's answer (counting.ts). */
  readonly estimated: boolean;
  /** Dollars, at PRICE. */
  readonly dollars: number;
}

/** What `calls` cost, divided by `per`. */
export function costOf(calls: readonly Call[], per: number): Cost {
  const dynamo = calls.filter((c) => c.service === 'dynamodb');
  const sqs = calls.length - dynamo.length;
  const write = dynamo.reduce((n, c) => n + c.write, 0);
  const read = dynamo.reduce((n, c) => n + c.read, 0);
  return {
    dynamo: dynamo.length / per,
    sqs: sqs / per,
    write: write / per,
    read: read / per,
    estimated: dynamo.some((c) => c.estimated && c.write + c.read > 0),
    dollars: (sqs * PRICE.sqsRequest + write * PRICE.write + read * PRICE.read) / per,
  };
}

export const units = (c: Cost) => `${c.estimated ? '~' : ''}${f(c.write)} / ${f(c.read)}`;
export const ratio = (a: number, b: number) => (b === 0 ? '-' : `${f(a / b, a / b >= 10 ? 0 : 2)}×`);
export const perMillion = (dollars: number) => `$${f(dollars * 1e6, 2)}`;

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
