import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnyBatchJob, defineBatchJob } from '../../../../src/core/batch-job.js';
import { Activity } from '../../../../src/worker/activity.js';
import { Batching } from '../../../../src/worker/batch/batching.js';
import { Fate } from '../../../../src/worker/fate/conclude.js';
import { Scheduler } from '../../../../src/worker/intake/scheduler.js';
import { queueState } from '../../../../src/worker/queue-state.js';
import { readOnce } from '../../../../src/worker/run/read.js';
import { eventually } from '../../../helpers/stack.js';
import { type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

/*
 * Batching: admit a batch job's messages (claim each job id), hold them by key, flush a batch when
 * it is due and a handler slot is free, and end each item through fate. On the in-memory parts.
 */

const flushed: string[][] = [];
const index = defineBatchJob({
  name: 'index',
  args: z.object({ doc: z.string(), shard: z.string() }),
  key: (a) => {
    if (a.shard === 'bad') throw new Error('no such shard');
    return a.shard;
  },
  maxSize: 3,
  maxWaitMs: 60_000,
  handle: (items) => void flushed.push(items.map((i) => i.args.doc)),
});

let w: InMemoryWorker;
afterEach(async () => {
  flushed.length = 0;
  await w.close();
});

async function batching(concurrency = 2) {
  w = await inMemoryWorker([index], { options: { concurrency } });
  const activity = new Activity(concurrency, w.ctx.onError);
  const scheduler = new Scheduler([queueState({ url: w.url, weight: 1, priority: 'normal', deadLetterQueueUrl: undefined })]);
  let b: Batching;
  const wake = () => b.pump();
  const fate = new Fate(w.ctx, scheduler, activity, wake);
  b = new Batching(w.ctx, activity, fate, wake);
  /** Receive every message in the queue and admit it, as the worker's dispatch does. */
  const admitAll = async () => {
    for (;;) {
      const [m] = w.memory.peek(w.url).filter((x) => x.visibleInMs === 0);
      if (m === undefined) return;
      const lease = await w.receive();
      const read = readOnce(w.ctx.config.jobs, lease);
      if (!read.ok) throw new Error(read.detail);
      b.admit(lease, read, read.job as AnyBatchJob);
    }
  };
  const settled = async () => {
    await eventually(() => b.held === 0, 'every item to leave the batches');
    await activity.settled();
    await w.ctx.deletes.flush();
    await w.ctx.visibility.flush();
  };
  return { b, activity, admitAll, settled };
}

describe('Batching', () => {
  it('holds items by key, flushes a full batch once a slot is free, and deletes its items', async () => {
    const { admitAll } = await batching();
    for (const doc of ['a', 'b', 'c']) await w.send('index', { doc, shard: 's1' });
    await w.send('index', { doc: 'z', shard: 's2' });
    await admitAll();
    await eventually(() => flushed.length === 1, 'the full batch of s1 to flush');
    expect(flushed[0]!.sort()).toEqual(['a', 'b', 'c']);
    await eventually(() => w.memory.peek(w.url).length === 1, 'its items deleted');
    // s2 waits for more items (or its maxWaitMs): still held, invisible.
    expect(w.memory.peek(w.url)[0]!.visibleInMs).toBeGreaterThan(0);
    expect(w.events.filter((e) => e === 'job:succeeded')).toHaveLength(3);
  });

  it('drops an item whose job id completed before it is batched', async () => {
    const { b, admitAll } = await batching();
    const id = await w.send('index', { doc: 'old', shard: 's1' });
    await w.lock.complete(id, 'earlier', 60);
    await admitAll();
    await eventually(() => b.held === 0 && w.memory.peek(w.url).length === 0, 'the duplicate deleted');
    expect(w.events).toContain('job:duplicate');
    expect(flushed).toEqual([]);
  });

  it('dead-letters an item whose key(args) throws, naming the error', async () => {
    const { admitAll, settled } = await batching();
    await w.send('index', { doc: 'x', shard: 'bad' });
    await admitAll();
    await settled();
    expect(w.memory.peek(w.url)).toEqual([]);
    expect(w.memory.peek(w.dlq)[0]!.attributes['sqsjobs-dlq-reason']?.StringValue).toBe('invalid-args');
  });

  it('does not flush while every handler slot is taken', async () => {
    const { activity, admitAll, b } = await batching(1);
    const busy = { signal: new AbortController().signal, abort: () => {} };
    activity.started(busy);
    for (const doc of ['a', 'b', 'c']) await w.send('index', { doc, shard: 's1' });
    await admitAll();
    await eventually(() => b.held === 3, 'the items claimed and held');
    b.pump();
    await new Promise((r) => setTimeout(r, 100));
    expect(flushed).toEqual([]);
    activity.ended(busy);
    b.pump();
    await eventually(() => flushed.length === 1, 'the batch to flush once the slot frees');
  });
});
