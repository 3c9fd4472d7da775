import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { JobRegistry } from '../../../src/core/job-registry.js';
import { fanOut } from '../../../src/fan-out/fan-out.js';
import { createProducer } from '../../../src/producer/producer.js';
import { getJob } from '../../../src/status/get-job.js';
import { createWorker, type Worker } from '../../../src/worker/worker.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { eventually } from '../../helpers/stack.js';

// A fan-out on the in-memory queue, lock and job store: no server. That these fakes decide as SQS,
// memcached and DynamoDB do is the contract tests' job (test/contracts).
const silent = pino({ level: 'silent' });
const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

describe('a fan-out on in-memory parts, as a user would unit-test one', () => {
  it('runs every child, then the completion job once with the counts, and the parent reads completed', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const store = new MemoryJobStore();
    const completions: unknown[] = [];
    const child = defineJob({
      name: 'resize',
      args: z.object({ n: z.number() }),
      handle: ({ n }) => {
        if (n === 3) throw new UnrecoverableError('bad image');
      },
    });
    const done = defineJob({
      name: 'resize-done',
      args: z.object({ parentId: z.string(), total: z.number(), succeeded: z.number(), failed: z.number(), album: z.string() }),
      handle: (args) => void completions.push(args),
    });
    const parent = defineJob({
      name: 'album',
      args: z.object({ album: z.string() }),
      handle: (args, ctx) =>
        ctx.fanOut(
          child,
          [1, 2, 3, 4, 5].map((n) => ({ n })),
          { onComplete: { job: done, args: { album: args.album } } },
        ),
    });
    const jobs = [parent, child, done];
    const producer = createProducer({ queueUrl: url, jobs, queue: memory, store });
    const { jobId } = await producer.enqueue(parent, { album: 'summer' }, { track: true });
    const worker = createWorker({
      queues: [url],
      jobs,
      queue: memory,
      lock: new MemoryLock(),
      store,
      waitTimeSeconds: 0,
      deleteFlushMs: 0,
      handleSignals: false,
      logger: silent,
      metrics: { sink: 'off' },
    });
    workers.push(worker);
    worker.start();
    await eventually(() => completions.length === 1 && memory.peek(url).length === 0, 'the completion job ran and the queue drained');
    expect(completions).toEqual([{ parentId: jobId, total: 5, succeeded: 4, failed: 1, album: 'summer' }]);
    expect(await getJob(jobId, store)).toMatchObject({
      state: 'completed',
      fanOut: { total: 5, sent: 5, succeeded: 4, failed: 1, completionSent: true },
    });
    expect(memory.peek(dlq)).toHaveLength(1); // the child that could not succeed
  });
});

describe('fanOut checks the completion job before sending any child', () => {
  const child = defineJob({ name: 'row', args: z.object({ n: z.number() }), handle: () => {} });
  const done = defineJob({
    name: 'rows-done',
    args: z.object({ parentId: z.string(), total: z.number().max(100), succeeded: z.number(), failed: z.number(), note: z.string() }),
    handle: () => {},
  });
  const setup = () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const store = new MemoryJobStore();
    const jobs = new JobRegistry([child, done]);
    const deps = {
      store,
      jobs,
      producer: (queueUrl: string) => createProducer({ queueUrl, jobs, queue: memory }),
      reclaimAfterMs: 60_000,
      logger: silent,
      onError: () => {},
    };
    const parent = { jobId: 'p1', jobName: 'rows', queueUrl: url, originId: 'm1', signal: new AbortController().signal };
    return { memory, url, store, deps, parent };
  };

  it('too big to send: PAYLOAD_TOO_LARGE, and no child sent, no fan-out opened', async () => {
    const { memory, url, store, deps, parent } = setup();
    const run = fanOut(deps, parent, child, [{ n: 1 }], { onComplete: { job: done, args: { note: 'x'.repeat(70_000) } } });
    await expect(run).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', message: expect.stringMatching(/^ctx.fanOut: onComplete: /) });
    expect(memory.peek(url)).toEqual([]);
    expect(await store.get('p1')).toBeUndefined();
  });

  it('refused by its schema with this many children (total above its max): ARGS_INVALID naming the field', async () => {
    const { memory, url, deps, parent } = setup();
    const many = Array.from({ length: 101 }, (_, n) => ({ n }));
    await expect(fanOut(deps, parent, child, many, { onComplete: { job: 'rows-done', args: { note: 'a' } } })).rejects.toMatchObject({
      code: 'ARGS_INVALID',
      message: expect.stringContaining('total'),
    });
    expect(memory.peek(url)).toEqual([]);
    await expect(
      fanOut(deps, parent, child, many.slice(0, 100), { onComplete: { job: 'rows-done', args: { note: 'a' } } }),
    ).resolves.toEqual({
      parentId: 'p1',
      total: 100,
    });
    expect(memory.peek(url)).toHaveLength(100);
  });
});
