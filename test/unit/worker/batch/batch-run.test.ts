import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../../src/core/batch-job.js';
import { itemExecution, reportedFailures } from '../../../../src/worker/batch/batch-run.js';
import type { HeldItem } from '../../../../src/worker/batch/held-item.js';
import { exclusiveKey } from '../../../../src/worker/turns/batch-turn.js';

const log = pino({ level: 'silent' });
const items = ['a', 'b', 'c'].map((id) => ({ read: { envelope: { id } } }) as unknown as HeldItem);

describe('reportedFailures: what a batch handler answered', () => {
  it('nothing, or no `failed`: every item succeeded', () => {
    expect(reportedFailures(undefined, items, log).size).toBe(0);
    expect(reportedFailures({}, items, log).size).toBe(0);
  });

  it('the failed items by job id, each with its error (a non-Error made one)', () => {
    const declined = new Error('declined');
    const failures = reportedFailures(
      {
        failed: [
          { jobId: 'b', error: declined },
          { jobId: 'c', error: 'timeout' },
        ],
      },
      items,
      log,
    );
    expect(failures.get('b')).toBe(declined);
    expect(failures.get('c')?.message).toBe('timeout');
    expect(failures.has('a')).toBe(false);
  });

  it('ignores ids not in the batch and a `failed` that is not an array, rather than fail the batch', () => {
    expect([...reportedFailures({ failed: [{ jobId: 'zzz', error: new Error('x') }, null] }, items, log).keys()]).toEqual([]);
    expect(reportedFailures({ failed: 'b' }, items, log).size).toBe(0);
  });
});

describe('exclusiveKey', () => {
  const job = defineBatchJob({ name: 'sync', args: z.object({}), maxSize: 1, maxWaitMs: 0, handle: () => undefined });
  it('keeps a short printable key, and hashes one memcached could not take', () => {
    expect(exclusiveKey(job, 'user-7')).toBe('batch/sync/user-7');
    expect(exclusiveKey(job, 'two words')).toMatch(/^batch\/sync\/[0-9a-f]{32}$/);
    expect(exclusiveKey(job, 'x'.repeat(300))).toMatch(/^batch\/sync\/[0-9a-f]{32}$/);
  });
});

describe('itemExecution: one item of a batch', () => {
  const returned = { kind: 'returned', value: undefined, processMs: 5 } as const;
  it('runs as the batch ran when the handler did not report it failed', () => {
    expect(itemExecution({ ...returned, value: { failed: [] } }, undefined)).toEqual(returned);
  });
  it('fails on its own when reported, with its error and the batch time', () => {
    const error = new Error('declined');
    expect(itemExecution(returned, error)).toEqual({ kind: 'threw', error, processMs: 5 });
  });
  it('shares the batch fate when the handler threw or its signal fired', () => {
    const threw = { kind: 'threw', error: new Error('db down'), processMs: 9 } as const;
    expect(itemExecution(threw, new Error('ignored'))).toBe(threw);
  });
});
