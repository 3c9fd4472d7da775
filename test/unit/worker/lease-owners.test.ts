import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Node, name, parse, tsFiles, walk } from '../../helpers/ast.js';

/*
 * Each field of a Lease (src/worker/hold/lease.ts) is written by the phase that owns it: the
 * heartbeat the hold's times, the run (or batch) phase what was read and who runs it (the run phase
 * being a message's delivery, delivery.ts, and its steps in run/), the
 * scheduler a FIFO job's retries in place. The claims (lock, permit) are private, written only
 * through hold() and endClaims(). This reads src/worker/ with swc and fails on a write
 * (`=`, `??=`, `+=`, `++` …) to `lease.<field>` or `<x>.lease.<field>` from another folder.
 * A write through another name for the lease is not seen: the convention is to call it `lease`.
 */

const WORKER = join(import.meta.dirname, '../../../src/worker');

/** Which folders (or files) of src/worker/ may write each field (lease.ts itself may write them all). */
const OWNERS: Record<string, readonly string[]> = {
  visibleAt: ['hold/'],
  nextExtendAt: ['hold/'],
  pending: ['hold/'],
  reading: ['run/'],
  info: ['delivery.ts', 'run/', 'batch/'],
  tracking: ['delivery.ts', 'run/', 'batch/'],
  progress: ['delivery.ts', 'run/', 'batch/'],
  retries: ['intake/'],
  notBefore: ['intake/'],
};

/** Is `n` an expression naming a lease: `lease`, or `<anything>.lease`? */
function isLease(n: Node): boolean {
  if (name(n) === 'lease') return true;
  return n.type === 'MemberExpression' && name(n.property) === 'lease';
}

function findWrites(file: string, source: string): string[] {
  const { ast, lineOf } = parse(source);
  const found: string[] = [];
  walk(ast, (n) => {
    const target = (n.type === 'AssignmentExpression' ? n.left : n.type === 'UpdateExpression' ? n.argument : undefined) as
      | Node
      | undefined;
    if (target?.type !== 'MemberExpression' || !isLease(target.object as Node)) return;
    const field = name(target.property);
    if (field === undefined || !(field in OWNERS)) return;
    if (file === 'hold/lease.ts' || OWNERS[field]!.some((folder) => file.startsWith(folder))) return;
    found.push(`src/worker/${file}:${lineOf(n)} writes lease.${field}: only ${OWNERS[field]!.join(' or ')} may`);
  });
  return found;
}

describe('each Lease field has one owner', () => {
  it('no file under src/worker/ writes a Lease field its phase does not own', () => {
    const files = tsFiles(WORKER);
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((f) => findWrites(relative(WORKER, f), readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('the check sees each kind of write (so an empty list means something)', () => {
    const source = [
      'export function settle(ctx, lease, d, open) {',
      '  lease.info = undefined;',
      '  d.lease.visibleAt += 1000;',
      '  lease.retries++;',
      '  lease.reading ??= read();',
      '  open.notBefore = 5;',
      '  lease.message = m;',
      '}',
    ].join('\n');
    expect(findWrites('fate/settle.ts', source)).toEqual([
      'src/worker/fate/settle.ts:2 writes lease.info: only delivery.ts or run/ or batch/ may',
      'src/worker/fate/settle.ts:3 writes lease.visibleAt: only hold/ may',
      'src/worker/fate/settle.ts:4 writes lease.retries: only intake/ may',
      'src/worker/fate/settle.ts:5 writes lease.reading: only run/ may',
    ]);
    expect(findWrites('run/claim.ts', source)).toEqual([
      'src/worker/run/claim.ts:3 writes lease.visibleAt: only hold/ may',
      'src/worker/run/claim.ts:4 writes lease.retries: only intake/ may',
    ]);
  });
});
