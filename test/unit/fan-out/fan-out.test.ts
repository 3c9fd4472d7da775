import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR_JOB } from '../../../src/core/envelope.js';
import { UnrecoverableError } from '../../../src/core/errors.js';
import { defineJob, JobRegistry } from '../../../src/core/job.js';
import { countChild, type CountDeps } from '../../../src/fan-out/count.js';
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

describe('countChild', () => {
  const setup = (jobs: JobRegistry = new JobRegistry()) => {
    const memory = new MemoryQueue();
    const standard = memory.create('done');
    const store = new MemoryJobStore();
    const errors: string[] = [];
    const deps: CountDeps = {
      store,
      jobs,
      producer: (queueUrl) => createProducer({ queueUrl, jobs, queue: memory }),
      reclaimAfterMs: 60_000,
      logger: silent,
      onError: (where) => void errors.push(where),
    };
    return { memory, standard, store, deps, errors };
  };
  const end = (parentId: string, jobId: string, succeeded = true) => ({ parentId, jobId, succeeded, originId: `m-${jobId}` });

  it('sends the completion through the producer once, under an id derived from the parent', async () => {
    const { memory, standard, store, deps } = setup();
    await store.openFanOut('p1', 'album', 2, { job: 'done-elsewhere', queueUrl: standard, args: { album: 'a' } });
    expect(await countChild(deps, end('p1', 'c1'))).toBe(true);
    expect(memory.peek(standard)).toHaveLength(0);
    expect(await countChild(deps, end('p1', 'c2', false))).toBe(true);
    expect(await countChild(deps, end('p1', 'c2', false))).toBe(true); // a redelivered last child: counted once, not sent twice
    const sent = memory.peek(standard);
    expect(sent).toHaveLength(1);
    // A job this worker does not run is sent by name; its args were checked when the fan-out opened.
    expect(JSON.parse(sent[0]!.body)).toMatchObject({
      id: 'p1.done',
      job: 'done-elsewhere',
      args: { album: 'a', parentId: 'p1', total: 2, succeeded: 1, failed: 1 },
    });
    expect(sent[0]!.attributes?.[ATTR_JOB]).toEqual({ DataType: 'String', StringValue: 'done-elsewhere' });
  });

  it('checks the args of a completion job this worker knows by its schema, as enqueue() does', async () => {
    const done = defineJob({
      name: 'done',
      args: z.object({ parentId: z.string(), total: z.number(), succeeded: z.number(), failed: z.number(), tag: z.string().default('x') }),
      handle: () => {},
    });
    const { memory, standard, store, deps } = setup(new JobRegistry([done]));
    await store.openFanOut('p2', 'album', 1, { job: 'done', queueUrl: standard });
    expect(await countChild(deps, end('p2', 'c1'))).toBe(true);
    expect(JSON.parse(memory.peek(standard)[0]!.body).args).toEqual({ parentId: 'p2', total: 1, succeeded: 1, failed: 0, tag: 'x' });
  });

  it('answers false (the child comes back) when the store fails or the send fails, and counts it once when it does', async () => {
    const { standard, store, deps, errors } = setup();
    await store.openFanOut('p3', 'album', 1, { job: 'done', queueUrl: `${standard}-missing` });
    store.down = true;
    expect(await countChild(deps, end('p3', 'c1'))).toBe(false);
    store.down = false;
    expect(await countChild(deps, end('p3', 'c1'))).toBe(false); // counted, but the completion's queue does not exist
    expect(errors).toEqual(['fan-out count', 'fan-out count']);
    expect((await store.get('p3'))?.fanOut).toMatchObject({ succeeded: 1, completionSent: false });
  });

  it('answers true for a child whose fan-out the store has no record of (nothing to count into)', async () => {
    const { deps } = setup();
    expect(await countChild(deps, end('gone', 'c1'))).toBe(true);
  });
});
