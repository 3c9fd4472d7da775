import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../src/core/batch-job.js';
import { UnrecoverableError, ValidationError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { runBatchHandler, runHandler } from '../../../src/testing/index.js';
import { importFile } from '../../../handlers/index.js';

// What a user's own unit test of a job does with sqs-jobs/testing: no server, the handler's real code.
const child = defineJob({ name: 'resize', args: z.object({ key: z.string() }), handle: () => {} });

describe('runHandler: a job run as a worker would, without servers', () => {
  it('checks args by the job schema first, naming the field', async () => {
    const job = defineJob({ name: 'charge', args: z.object({ cents: z.number().int() }), handle: () => 'charged' });
    await expect(runHandler(job, { cents: 1.5 } as never)).rejects.toThrow(ValidationError);
    await expect(runHandler(job, { cents: 1.5 } as never)).rejects.toMatchObject({ issues: [{ field: 'args.cents' }] });
    expect((await runHandler(job, { cents: 150 })).result).toBe('charged');
  });

  it('gives the handler its context: attempt, tenant, job id, and records progress and fan-outs', async () => {
    const job = defineJob({
      name: 'import',
      args: z.object({ rows: z.number() }),
      handle: async ({ rows }, ctx) => {
        ctx.progress(0, rows);
        ctx.progress.add(2);
        ctx.progress.data({ phase: 'rows' });
        await ctx.fanOut(child, [{ key: 'a' }, { key: 'b' }]);
        return `${ctx.jobId}/${ctx.attempt}/${ctx.tenant}`;
      },
    });
    const run = await runHandler(job, { rows: 10 }, { jobId: 'j1', attempt: 3, tenant: 'acme' });
    expect(run.result).toBe('j1/3/acme');
    expect(run.progress).toEqual({ done: 2, total: 10, data: { phase: 'rows' } });
    expect(run.fanOuts).toEqual([{ job: 'resize', argsList: [{ key: 'a' }, { key: 'b' }], options: undefined }]);
  });

  it("checks a fan-out's child args as the producer would, naming the child", async () => {
    const job = defineJob({
      name: 'split',
      args: z.object({}),
      handle: (_a, ctx) => ctx.fanOut(child, [{ key: 'a' }, { key: 1 } as never]),
    });
    await expect(runHandler(job, {})).rejects.toMatchObject({ issues: [{ field: 'argsList[1].key' }] });
  });

  it('hands the handler its args as a worker would: after JSON, parsed by the schema again', async () => {
    const job = defineJob({
      name: 'dated',
      args: z.object({ at: z.coerce.date(), tags: z.array(z.string()).default([]) }),
      handle: ({ at, tags }) => `${at instanceof Date}/${tags.length}`,
    });
    expect((await runHandler(job, { at: '2026-11-24T00:00:00Z' })).result).toBe('true/0');
  });

  it('throws what the handler throws (an UnrecoverableError too)', async () => {
    const job = defineJob({
      name: 'bad',
      args: z.object({}),
      handle: () => {
        throw new UnrecoverableError('no such invoice');
      },
    });
    await expect(runHandler(job, {})).rejects.toBeInstanceOf(UnrecoverableError);
  });

  it("aborts ctx.signal at the job's timeout, and the run fails with the timeout's error", async () => {
    let saw: string | undefined;
    const job = defineJob({
      name: 'slow',
      args: z.object({}),
      timeoutMs: 50,
      handle: (_a, ctx) =>
        new Promise<void>((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            saw = (ctx.signal.reason as Error).message;
            resolve();
          }),
        ),
    });
    await expect(runHandler(job, {})).rejects.toMatchObject({ code: 'JOB_TIMEOUT' });
    expect(saw).toBe('job "slow" timed out after 50 ms');
  });

  it('fails a handler that returns only after its timeout, as the worker counts it', async () => {
    const job = defineJob({ name: 'late', args: z.object({}), timeoutMs: 20, handle: () => new Promise((r) => setTimeout(r, 80)) });
    await expect(runHandler(job, {})).rejects.toMatchObject({ code: 'JOB_TIMEOUT' });
  });
});

describe("the README's example", () => {
  it('runs the example import-file job: its fan-out recorded with every child', async () => {
    const run = await runHandler(importFile, { file: 'imports/a.csv', rows: 3 }, { attempt: 2, tenant: 'acme' });
    expect(run.result).toEqual({ parentId: expect.any(String), total: 3 });
    expect(run.fanOuts).toMatchObject([{ job: 'import-row', argsList: [0, 1, 2].map((row) => ({ file: 'imports/a.csv', row })) }]);
  });
});

describe('runBatchHandler: one batch of a batch job', () => {
  const job = defineBatchJob({
    name: 'index',
    args: z.object({ doc: z.string(), shard: z.string() }),
    key: (a) => a.shard,
    maxSize: 50,
    maxWaitMs: 1_000,
    handle: (items) => ({
      failed: items.filter((i) => i.args.doc === 'bad').map((i) => ({ jobId: i.jobId, error: new Error('rejected') })),
    }),
  });

  it('answers the failed items by job id', async () => {
    const { items, failed } = await runBatchHandler(job, [
      { doc: 'ok', shard: 's1' },
      { doc: 'bad', shard: 's1' },
    ]);
    expect([...failed.keys()]).toEqual([items[1]!.jobId]);
  });

  it('refuses items of different keys (a batch holds one key)', async () => {
    await expect(
      runBatchHandler(job, [
        { doc: 'ok', shard: 's1' },
        { doc: 'ok', shard: 's2' },
      ]),
    ).rejects.toThrow(/one key/);
  });
});
