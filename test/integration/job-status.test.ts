import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual as deepEqual } from 'node:util';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { run } from '../../src/cli/program.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineBatchJob } from '../../src/core/batch-job.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { fanOutResultSchema } from '../../src/fan-out/completion.js';
import type { JobStore } from '../../src/ports/job-store.js';
import type { JobStatus, Transition } from '../../src/ports/status-store.js';
import { getJob, JobStatusReader } from '../../src/status/get-job.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `status-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const statusReader = new JobStatusReader(store, {});
/** The store answers in these tests: a JobStatus or nothing, never `unknown`. */
const reader = {
  get: async (jobId: string): Promise<JobStatus | undefined> => {
    const view = await statusReader.get(jobId);
    if (view?.state === 'unknown') throw new Error(`the store did not answer: ${view.error}`);
    return view;
  },
  close: () => statusReader.close(),
};
beforeAll(() => createJobTable(dynamo, table));
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
  reader.close();
});
const start = useWorkers();
const empty = { visible: 0, inFlight: 0, delayed: 0 };

describe('job status: a tracked job, as its user sees it', () => {
  it('waiting at enqueue, running with its progress, then completed with its result', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-ok');
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const job = defineJob({
      name: 'import',
      args: z.object({ rows: z.number() }),
      handle: async ({ rows }, ctx) => {
        ctx.progress(0, rows);
        for (let i = 1; i <= rows; i++) ctx.progress(i);
        ctx.progress.data({ file: 'users.csv' });
        await gate;
        return { imported: rows };
      },
    });
    const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(job, { rows: 37 }, { track: true });
    producer.close();
    expect(await reader.get(jobId)).toMatchObject({ jobId, jobName: 'import', state: 'waiting', attempt: 0 });
    const worker = start({ queues: [queueUrl], jobs: [job], store, progressIntervalMs: 100 });
    await worker.start();
    const running = await eventually(async () => {
      const s = await reader.get(jobId);
      return s?.state === 'running' && s.progress?.done === 37 ? s : undefined;
    }, 'running at 37 of 37');
    expect(running).toMatchObject({ attempt: 1, progress: { done: 37, total: 37 }, data: { file: 'users.csv' } });
    expect(running.startedAt).toBeDefined();
    expect(running.worker).toMatch(/:\d+$/);
    release();
    const done = await eventually(async () => {
      const s = await reader.get(jobId);
      return s?.state === 'completed' ? s : undefined;
    }, 'completed');
    expect(done).toMatchObject({ result: { imported: 37 }, progress: { done: 37, total: 37 } });
    expect(await getJob(jobId, store, {})).toMatchObject({ state: 'completed' });
  });

  it('a run shorter than the progress interval writes only its end (with when it started)', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-short');
    const writes: string[] = [];
    const inner = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
    const counting = delegate(inner, {
      transition: (t: Transition) => {
        writes.push(t.state);
        return inner.transition(t);
      },
    });
    const job = defineJob({ name: 'quick', args: z.object({}), track: true, handle: () => 'ok' });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(job, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job], store: counting, progressIntervalMs: 5_000 });
    await worker.start();
    await eventually(async () => (await reader.get(jobId))?.state === 'completed', 'completed');
    expect(writes).toEqual(['completed']);
    const done = await reader.get(jobId);
    expect(Date.parse(done!.startedAt!)).toBeLessThanOrEqual(Date.parse(done!.finishedAt!));
    expect(done?.worker).toMatch(/:\d+$/);
  });

  it('a stop right after a job ends still records its end (state writes in flight are waited for)', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-stop');
    const job = defineJob({ name: 'last', args: z.object({ n: z.number() }), track: true, handle: () => {} });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const sent = await producer.enqueueMany(
      job,
      Array.from({ length: 20 }, (_, n) => ({ n })),
    );
    producer.close();
    // A slow store: each state write lands 2.5 s after it is made (longer than a stop takes).
    const inner = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
    const slow = delegate(inner, {
      transition: async (t) => {
        await sleepFor(2_500);
        return inner.transition(t);
      },
    });
    const worker = start({ queues: [queueUrl], jobs: [job], store: slow });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 20, 'every job to run');
    await worker.stop();
    const states = await Promise.all(sent.map(async ({ jobId }) => (await reader.get(jobId))?.state));
    expect(states).toEqual(Array(20).fill('completed'));
  });

  it('retrying with the error and when it runs next, then completed on attempt 2', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-retry');
    const job = defineJob({
      name: 'flaky',
      args: z.object({}),
      track: true, // every run of this job is tracked, however it was enqueued
      backoff: { baseMs: 3_000, jitter: 0 },
      handle: (_a, ctx) => {
        if (ctx.attempt === 1) throw new Error('upstream 503');
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(job, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job], store });
    await worker.start();
    const retrying = await eventually(async () => {
      const s = await reader.get(jobId);
      return s?.state === 'retrying' ? s : undefined;
    }, 'retrying');
    expect(retrying).toMatchObject({ attempt: 1, error: 'Error: upstream 503' });
    expect(Date.parse(retrying.nextAttemptAt!)).toBeGreaterThan(Date.now());
    await eventually(async () => (await reader.get(jobId))?.state === 'completed', 'completed', 30_000);
    expect((await reader.get(jobId))?.attempt).toBe(2);
  });

  it('failed with the dead-letter reason and error; an untracked job leaves no record', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-dead');
    const job = defineJob({
      name: 'charge',
      args: z.object({}),
      handle: () => {
        throw new UnrecoverableError('card closed');
      },
    });
    const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
    const tracked = await producer.enqueue(job, {}, { track: true });
    const untracked = await producer.enqueue(job, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job], store });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 2, 'both dead-lettered');
    await eventually(async () => (await reader.get(tracked.jobId))?.state === 'failed', 'failed');
    expect(await reader.get(tracked.jobId)).toMatchObject({ reason: 'unrecoverable', error: 'card closed' });
    expect(await reader.get(untracked.jobId)).toBeUndefined();
  });

  it('store unreachable: jobs still run, and the status says unknown rather than a guess', async () => {
    const { queueUrl } = await freshQueues(sqs, 'status-down');
    const down = { table, endpoint: 'http://127.0.0.1:1' }; // nothing listens there
    let runs = 0;
    const job = defineJob({ name: 'ping', args: z.object({}), track: true, handle: () => void runs++ });
    const producer = createProducer({ queueUrl, store: down }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(job, {}, { track: true }); // enqueued although the waiting write fails
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job], store: down });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 1, 'the job to run');
    expect(runs).toBe(1);
    expect(await getJob(jobId, down, {})).toMatchObject({ jobId, state: 'unknown', error: expect.stringMatching(/ECONNREFUSED|connect/) });
  });
});

describe('fan-out', () => {
  const completion = defineJob({ name: 'import-done', args: fanOutResultSchema.extend({ source: z.string() }), handle: () => {} });

  it('counts every child once (duplicates too) and sends the completion exactly once, with the counts', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'fanout');
    const completions: z.output<typeof completion.args>[] = [];
    const done = defineJob({ ...completionSpec(completion), handle: (a) => void completions.push(a as z.output<typeof completion.args>) });
    const childRuns = new Map<number, number>();
    const child = defineJob({
      name: 'import-row',
      args: z.object({ row: z.number() }),
      handle: async ({ row }) => {
        childRuns.set(row, (childRuns.get(row) ?? 0) + 1);
        await sleepFor(row % 7);
        if (row % 25 === 3) throw new UnrecoverableError(`row ${row} is malformed`);
      },
    });
    const parent = defineJob({
      name: 'import-file',
      args: z.object({ rows: z.number() }),
      handle: async ({ rows }, ctx) => {
        const argsList = Array.from({ length: rows }, (_, row) => ({ row }));
        return ctx.fanOut(child, argsList, { onComplete: { job: done, args: { source: 's3://bucket/users.csv' } }, chunkSize: 40 });
      },
    });
    const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
    const { jobId: parentId } = await producer.enqueue(parent, { rows: 100 }, { track: true });
    const options = { queues: [queueUrl], jobs: [parent, child, done], store, lockKeyPrefix: `fan-${randomUUID()}:`, concurrency: 8 };
    const a = start(options);
    const b = start(options);
    const errors = [recordEvents(a), recordEvents(b)];
    await Promise.all([a.start(), b.start()]);
    // 5% of the children delivered twice: the same job ids sent again while the fan-out runs.
    await eventually(async () => ((await reader.get(parentId))?.fanOut?.sent ?? 0) >= 40, 'the first chunk sent');
    await producer.enqueueMany(
      child,
      [0, 20, 40, 60, 80].map((row) => ({ row })),
      { jobIds: [0, 20, 40, 60, 80].map((row) => `${parentId}.c${row}`), parent: parentId },
    );
    producer.close();
    await eventually(() => completions.length === 1, 'the completion job to run', 30_000);
    await eventually(
      async () => (await queueCounts(sqs, queueUrl)).visible + (await queueCounts(sqs, queueUrl)).inFlight === 0,
      'the queue to empty',
      30_000,
    );
    await sleepFor(500);
    expect(completions).toEqual([{ parentId, total: 100, succeeded: 96, failed: 4, source: 's3://bucket/users.csv' }]);
    const status = await reader.get(parentId);
    expect(status?.fanOut).toEqual({ total: 100, sent: 100, succeeded: 96, failed: 4, completionSent: true });
    expect(status?.progress).toEqual({ done: 100, total: 100 });
    expect(status?.state).toBe('completed');
    expect(await drain(sqs, dlqUrl)).toHaveLength(4); // the malformed rows, with their reason
    expect([...childRuns.keys()].length).toBe(100);
    expect(errors.flatMap((e) => e.of('error'))).toEqual([]);
  });

  it('a fan-out of no children completes at once; fanning out again resumes at the cursor and sends nothing twice', async () => {
    const { queueUrl } = await freshQueues(sqs, 'fanout-resume');
    const completions: unknown[] = [];
    const done = defineJob({ ...completionSpec(completion), handle: (a) => void completions.push(a) });
    const childRuns: number[] = [];
    const child = defineJob({ name: 'row', args: z.object({ row: z.number() }), handle: ({ row }) => void childRuns.push(row) });
    const parent = defineJob({
      name: 'split',
      args: z.object({ rows: z.number() }),
      handle: async ({ rows }, ctx) => {
        const argsList = Array.from({ length: rows }, (_, row) => ({ row }));
        const onComplete = { job: done, args: { source: 'x' } };
        await ctx.fanOut(child, argsList, { onComplete, chunkSize: 7 });
        await ctx.fanOut(child, argsList, { onComplete, chunkSize: 7 }); // as a retried parent would
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(parent, [{ rows: 0 }, { rows: 20 }]);
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [parent, child, done], store });
    await worker.start();
    await eventually(() => completions.length === 2 && childRuns.length === 20, 'both completions and every child', 30_000);
    await sleepFor(500);
    expect(childRuns.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(completions).toHaveLength(2);
    expect(completions).toContainEqual(expect.objectContaining({ total: 0, succeeded: 0, failed: 0 }));
    expect(completions).toContainEqual(expect.objectContaining({ total: 20, succeeded: 20, failed: 0 }));
    // A child that found the completion claimed but not yet sent comes back 5 s later to be counted.
    await eventually(async () => deepEqual(await queueCounts(sqs, queueUrl), empty), 'the queue to empty', 20_000);
  });

  // maxReceiveCount 1: the child is dead-lettered (retries-exhausted) on its last receive, where a
  // hand-back by visibility would let SQS redrive it away, and a plain re-sent copy would run again:
  // it is re-sent marked as dead-lettered. maxReceiveCount 5 (UnrecoverableError on receive 1): it
  // comes back by visibility and the dead-letter marker (by message id) recognises it.
  it.each([
    { maxReceiveCount: 1, unrecoverable: false },
    { maxReceiveCount: 5, unrecoverable: true },
  ])(
    'a dead-lettered child whose count fails comes back, is counted then, and never runs again (%o)',
    async ({ maxReceiveCount, unrecoverable }) => {
      const { queueUrl, dlqUrl } = await freshQueues(sqs, 'fanout-count-fail', { maxReceiveCount });
      const completions: unknown[] = [];
      const done = defineJob({ ...completionSpec(completion), handle: (a) => void completions.push(a) });
      const runs = new Map<number, number>();
      const child = defineJob({
        name: 'row',
        args: z.object({ row: z.number() }),
        handle: ({ row }) => {
          runs.set(row, (runs.get(row) ?? 0) + 1);
          if (row === 1) throw unrecoverable ? new UnrecoverableError('row 1 is malformed') : new Error('row 1 failed');
        },
      });
      const parent = defineJob({
        name: 'split',
        args: z.object({}),
        handle: (_a, ctx) => ctx.fanOut(child, [{ row: 0 }, { row: 1 }, { row: 2 }], { onComplete: { job: done, args: { source: 'x' } } }),
      });
      // The store refuses the first count of the failing child (a store blip right after its DLQ send).
      const inner = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
      let refused = 0;
      const flaky = delegate(inner, {
        childEnded: (...a) => {
          if (a[0].childId.endsWith('.c1') && refused++ === 0) return Promise.reject(new Error('store unreachable'));
          return inner.childEnded(...a);
        },
      });
      const producer = createProducer({ queueUrl }, LOCAL_ENV);
      await producer.enqueue(parent, {});
      producer.close();
      const worker = start({ queues: [queueUrl], jobs: [parent, child, done], store: flaky });
      await worker.start();
      await eventually(() => completions.length === 1, 'the completion, once the failed child is counted', 30_000);
      expect(refused).toBeGreaterThanOrEqual(2); // refused once, counted when it came back
      expect(runs.get(1)).toBe(1); // came back as a leftover of the DLQ, not run again
      expect(completions).toEqual([expect.objectContaining({ total: 3, succeeded: 2, failed: 1 })]);
      expect((await drain(sqs, dlqUrl)).length).toBe(1);
    },
  );

  it('fans out into a batch job: children are handled in batches, and each is counted, poison too', async () => {
    const { queueUrl } = await freshQueues(sqs, 'fanout-batch');
    const completions: unknown[] = [];
    const done = defineJob({ ...completionSpec(completion), handle: (a) => void completions.push(a) });
    const sizes: number[] = [];
    const rows = defineBatchJob({
      name: 'rows',
      args: z.object({ row: z.number() }),
      key: ({ row }) => {
        if (row === 3) throw new Error('no key for row 3');
        return 'all';
      },
      maxSize: 5,
      maxWaitMs: 200,
      handle: (items) => void sizes.push(items.length),
    });
    const parent = defineJob({
      name: 'split',
      args: z.object({}),
      handle: (_a, ctx) =>
        ctx.fanOut(
          rows,
          Array.from({ length: 10 }, (_, row) => ({ row })),
          { onComplete: { job: done, args: { source: 'x' } } },
        ),
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(parent, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [parent, rows, done], store });
    await worker.start();
    await eventually(() => completions.length === 1, 'the completion', 30_000);
    expect(completions).toEqual([expect.objectContaining({ total: 10, succeeded: 9, failed: 1 })]);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(9);
    expect(Math.max(...sizes)).toBeGreaterThan(1); // batched
  });

  it('refuses bad children before sending any, naming the entry and the field', async () => {
    const { queueUrl } = await freshQueues(sqs, 'fanout-bad');
    const child = defineJob({ name: 'row', args: z.object({ row: z.number() }), handle: () => {} });
    const errors: string[] = [];
    const parent = defineJob({
      name: 'split',
      args: z.object({}),
      handle: async (_a, ctx) => {
        await ctx.fanOut(child, [{ row: 1 }, { row: 'two' } as never], {}).catch((e: Error) => {
          errors.push(e.message);
          throw new UnrecoverableError(e.message);
        });
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(parent, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [parent, child], store });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1, 'the parent dead-lettered');
    expect(errors[0]).toMatch(/argsList\[1\].*args\.row/);
    expect(events.count('job:start')).toBe(1); // no child was sent
  });

  it("refuses a completion job whose schema does not take the fan-out's result, before sending any child", async () => {
    const { queueUrl } = await freshQueues(sqs, 'fanout-bad-done');
    const child = defineJob({ name: 'row', args: z.object({ row: z.number() }), handle: () => {} });
    const strict = defineJob({ name: 'done-strict', args: z.object({ parentId: z.string(), region: z.string() }), handle: () => {} });
    const errors: string[] = [];
    const parent = defineJob({
      name: 'split',
      args: z.object({}),
      handle: async (_a, ctx) => {
        await ctx.fanOut(child, [{ row: 1 }], { onComplete: { job: strict } }).catch((e: Error) => {
          errors.push(e.message);
          throw new UnrecoverableError(e.message);
        });
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(parent, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [parent, child, strict], store });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1, 'the parent dead-lettered');
    expect(errors[0]).toMatch(/onComplete.*args\.region/);
    expect(events.count('job:start')).toBe(1); // no child was sent
  });
});

/** A JobStore that passes every call to `inner`, but for `overrides` (and a close that leaves the shared client open). */
function delegate(inner: JobStore, overrides: Partial<JobStore>): JobStore {
  return {
    transition: (t) => inner.transition(t),
    progress: (jobId, update) => inner.progress(jobId, update),
    get: (jobId) => inner.get(jobId),
    openFanOut: (...a) => inner.openFanOut(...a),
    fanOutSent: (...a) => inner.fanOutSent(...a),
    childEnded: (...a) => inner.childEnded(...a),
    claimEmptyCompletion: (...a) => inner.claimEmptyCompletion(...a),
    completionSent: (parentId) => inner.completionSent(parentId),
    close: () => {},
    ...overrides,
  };
}

/** The completion job's definition fields, to give it a handler per test. */
function completionSpec<T extends { name: string; args: z.ZodType }>(job: T) {
  return { name: job.name, args: job.args };
}

describe('sqs-jobs store create / job <id>', () => {
  async function cli(args: string[], more: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const env = { AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', ...more };
    const io = {
      out: (t: string) => {
        out += t;
      },
      err: (t: string) => {
        err += t;
      },
      env,
      signal: new AbortController().signal,
    };
    const code = await run(args, io);
    return { code, out, err };
  }

  it('creates the table once, and shows a job with a progress bar until it ends (--watch)', async () => {
    const name = `cli-${randomUUID().slice(0, 8)}`;
    expect((await cli(['store', 'create', '--table', name])).out).toMatch(/created: on-demand, TTL on expiresAt/);
    expect((await cli(['store', 'create', '--table', name])).out).toMatch(/already there/);
    const { queueUrl } = await freshQueues(sqs, 'status-cli');
    const job = defineJob({
      name: 'export',
      args: z.object({}),
      track: true,
      handle: async (_a, ctx) => {
        for (let i = 1; i <= 4; i++) {
          ctx.progress(i * 25, 100);
          await sleepFor(400);
        }
        return { file: 'out.csv' };
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(job, {});
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job], store: { table: name, endpoint: LOCAL_DYNAMODB }, progressIntervalMs: 100 });
    await worker.start();
    const watched = await cli(['job', jobId, '--table', name, '--watch', '--every', '1']);
    expect(watched.code, watched.err).toBe(0);
    const lines = watched.out.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      new RegExp(`^export ${jobId}  completed  attempt 1  \\[#{24}\\] 100/100 100%  result \\{"file":"out.csv"\\}$`),
    );
    expect(lines.some((l) => /running {2}attempt 1 {2}\[#*-+\] (25|50|75)\/100/.test(l))).toBe(true);
    const missing = await cli(['job', 'no-such-job', '--table', name]);
    expect([missing.code, missing.err]).toEqual([3, expect.stringMatching(/JOB_NOT_FOUND: no job no-such-job in cli-/)]);
    expect((await cli(['job', jobId])).err).toMatch(/CONFIG_INVALID: name the job store table: --table <name> or SQS_JOBS_JOB_TABLE/);
  });

  it('a job never enqueued is JOB_NOT_FOUND (exit 3); a store that does not answer is STORE_UNREACHABLE (exit 4)', async () => {
    const missing = await cli(['job', `never-${randomUUID().slice(0, 8)}`, '--table', table]);
    expect(missing).toMatchObject({ code: 3, out: '' });
    expect(missing.err).toMatch(
      new RegExp(`^sqs-jobs: JOB_NOT_FOUND: no job never-\\w+ in ${table} \\(never tracked, or its record expired\\)\\n$`),
    );
    for (const watch of [[], ['--watch']]) {
      const down = await cli(['job', 'any', '--table', table, '--dynamodb-endpoint', 'http://127.0.0.1:1', ...watch]); // nothing listens there
      expect(down, watch.join(' ')).toMatchObject({ code: 4, out: '' });
      expect(down.err).toMatch(
        new RegExp(`^sqs-jobs: STORE_UNREACHABLE: the job store \\(table ${table}\\) did not answer: .*(ECONNREFUSED|connect)`),
      );
    }
  });

  it('store create with an invalid table name: CONFIG_INVALID naming the flag and the rule, before any call', async () => {
    for (const [args, env, setting] of [
      [['--table', 't1'], {}, '--table'],
      [[], { SQS_JOBS_JOB_TABLE: 'no spaces' }, 'SQS_JOBS_JOB_TABLE'],
    ] as const) {
      // Against DynamoDB Local, and against an endpoint where nothing listens: no call is made either way.
      for (const endpoint of [LOCAL_DYNAMODB, 'http://127.0.0.1:1']) {
        const r = await cli(['store', 'create', ...args, '--dynamodb-endpoint', endpoint], env);
        expect(r.code).toBe(1);
        expect(r.err).toMatch(
          new RegExp(
            `^sqs-jobs: CONFIG_INVALID: invalid job store table: ${setting}: must be a DynamoDB table name: 3-255 letters, digits, _ - \\. \\(got "`,
          ),
        );
        expect(r.err).not.toMatch(/ValidationException|ECONNREFUSED|\n\s+at /);
        expect(r.err.trim().split('\n')).toHaveLength(1);
      }
    }
  });
});
