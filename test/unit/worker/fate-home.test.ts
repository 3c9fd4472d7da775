import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Node, name, parse, tsFiles, walk } from '../../helpers/ast.js';

/*
 * A received message's fate has one home: only decide/decide.ts builds an Outcome, and only
 * fate/settle.ts deletes, hands back, re-sends or dead-letters a message (the heartbeat's
 * visibility extensions and the coalescers that carry settle's calls excepted). This reads every
 * file under src/worker/ with a real TypeScript parser and fails on a violation, naming the file
 * and the line.
 */

const ROOT = join(import.meta.dirname, '../../..');
const WORKER = join(ROOT, 'src/worker');

const OUTCOME_KINDS = new Set(['succeeded', 'duplicate', 'retry', 'dead-letter', 'hand-back', 'lost', 'defer', 'wait', 'cancelled']);
/** The queue port's calls that change or end a message. */
const QUEUE_ACTS = new Set(['send', 'sendBatch', 'deleteBatch', 'changeVisibilityBatch']);
/** The coalescers settle's deletes, hand-backs and deferrals go through: `<x>.deletes.delete(…)`, `<x>.visibility.change(…)`, `<x>.resends.resend(…)`. */
const BATCHED_ACTS = new Map([
  ['deletes', 'delete'],
  ['visibility', 'change'],
  ['resends', 'resend'],
]);

const DECIDE = 'decide/decide.ts';
/** Where Outcomes are built: decide.ts, and its parts named decide-<part>.ts. */
const isDecider = (file: string) => /^decide\/decide(-[a-z]+)?\.ts$/.test(file);
const SETTLE = 'fate/settle.ts';
/** Settle's files: settle.ts, and its parts named settle-<part>.ts (settle-back.ts: its ways back to the queue). */
const isSettle = (file: string) => /^fate\/settle(-[a-z]+)?\.ts$/.test(file);
/** Who else may make which queue call, and why. */
const ALSO_ALLOWED: Record<string, readonly string[]> = {
  'hold/heartbeat.ts': ['changeVisibilityBatch'], // extends held messages: it ends none
  'fate/coalescers.ts': ['deleteBatch', 'changeVisibilityBatch', 'sendBatch'], // carries settle's deletes, hand-backs and deferrals in batches
  'fate/acts.ts': ['send'], // settle's acting port: the dead letter's send (the context's port only receives)
  'schedule-ticks.ts': ['send'], // sends the messages of jobs kept in the job store until their time: none was received
};

interface Finding {
  readonly file: string;
  readonly line: number;
  readonly what: string;
}

/** What in `source` (the file at `file`, relative to src/worker) breaks the rules. */
function findViolations(file: string, source: string): Finding[] {
  const { ast, lineOf } = parse(source);
  const findings: Finding[] = [];
  /** Literals passed straight to recordEnd(): a StatusEnd for the job store, which shares some kind names. */
  const statusEnds = new Set<unknown>();
  walk(ast, (n) => {
    if (n.type === 'CallExpression' && name(n.callee) === 'recordEnd') {
      const args = n.arguments as { expression: unknown }[];
      statusEnds.add(args[3]?.expression);
    }
  });
  walk(ast, (n) => {
    if (n.type === 'ObjectExpression' && !isDecider(file) && !statusEnds.has(n)) {
      for (const p of n.properties as Node[]) {
        const value = p.value as Node | undefined;
        if (
          p.type === 'KeyValueProperty' &&
          name(p.key) === 'kind' &&
          value?.type === 'StringLiteral' &&
          OUTCOME_KINDS.has(value.value as string)
        )
          findings.push({ file, line: lineOf(n), what: `builds an Outcome ({ kind: '${value.value}' }): only decide/decide*.ts may` });
      }
    }
    if (n.type !== 'CallExpression') return;
    const callee = n.callee as Node;
    if (callee.type !== 'MemberExpression') return;
    // A private method (`this.#send`) is never the queue port's.
    const method = (callee.property as Node).type === 'Identifier' ? name(callee.property) : undefined;
    if (method === undefined) return;
    if (QUEUE_ACTS.has(method) && !isSettle(file) && !(ALSO_ALLOWED[file] ?? []).includes(method))
      findings.push({ file, line: lineOf(n), what: `calls the queue port's ${method}(): only fate/settle*.ts acts on a received message` });
    const owner = callee.object as Node;
    const batcher = owner.type === 'MemberExpression' ? name(owner.property) : name(owner);
    if (batcher !== undefined && BATCHED_ACTS.get(batcher) === method && !isSettle(file))
      findings.push({ file, line: lineOf(n), what: `calls ${batcher}.${method}(): only fate/settle*.ts acts on a received message` });
  });
  return findings;
}

describe("a message's fate has one home", () => {
  it('no file under src/worker/ but decide/decide.ts builds an Outcome, and none but fate/settle.ts acts on a received message', () => {
    const files = tsFiles(WORKER);
    expect(files.length).toBeGreaterThan(20);
    const findings = files.flatMap((f) => findViolations(relative(WORKER, f), readFileSync(f, 'utf8')));
    expect(findings.map((f) => `src/worker/${f.file}:${f.line} ${f.what}`)).toEqual([]);
  });

  it('the check sees each kind of violation (so an empty list means something)', () => {
    const source = [
      'export async function elsewhere(ctx, lease, m) {',
      "  const outcome = { kind: 'hand-back', reason: 'x', delaySeconds: 0, abandoned: false };",
      '  await ctx.sqs.send(m.queueUrl, m);',
      '  await ctx.sqs.changeVisibilityBatch(m.queueUrl, []);',
      '  await ctx.deletes.delete(m);',
      '  await this.#visibility.change(m, 5);',
      "  await recordEnd(ctx, lease, info, { kind: 'succeeded' });",
      '  new Set().delete(m);',
      '  this.#send(m.queueUrl);',
      '}',
    ].join('\n');
    expect(findViolations('delivery.ts', source).map((f) => [f.line, f.what.split(': only')[0]])).toEqual([
      [2, "builds an Outcome ({ kind: 'hand-back' })"],
      [3, "calls the queue port's send()"],
      [4, "calls the queue port's changeVisibilityBatch()"],
      [5, 'calls deletes.delete()'],
      [6, 'calls visibility.change()'],
    ]);
    expect(findViolations('hold/heartbeat.ts', source).map((f) => f.line)).toEqual([2, 3, 5, 6]);
    expect(findViolations(SETTLE, source).map((f) => f.line)).toEqual([2]);
    expect(findViolations('fate/settle-back.ts', source).map((f) => f.line)).toEqual([2]);
    expect(findViolations('fate/settled.ts', source).map((f) => f.line)).toEqual([2, 3, 4, 5, 6]); // a name like settle's is not settle's
    expect(findViolations(DECIDE, source).map((f) => f.line)).toEqual([3, 4, 5, 6]);
    expect(findViolations('decide/decide-claim.ts', source).map((f) => f.line)).toEqual([3, 4, 5, 6]);
  });
});
