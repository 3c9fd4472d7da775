import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR_JOB } from '../../../src/core/envelope.js';
import { defineJob } from '../../../src/core/job.js';
import { JobRegistry } from '../../../src/core/job-registry.js';
import { type CountDeps, countChild } from '../../../src/fan-out/count.js';
import { createProducer } from '../../../src/producer/producer.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

// A child's end counted in its parent, and the completion sent through the producer, on the
// in-memory queue and job store (held to SQS's and DynamoDB's answers by test/contracts).
const silent = pino({ level: 'silent' });

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
