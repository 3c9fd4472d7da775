import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type AnyBatchJob, defineBatchJob } from '../../../../src/core/batch-job.js';
import { defineJob } from '../../../../src/core/job.js';
import { Activity } from '../../../../src/worker/activity.js';
import { Batching } from '../../../../src/worker/batch/batching.js';
import { Scheduler } from '../../../../src/worker/intake/scheduler.js';
import { queueState } from '../../../../src/worker/queue-state.js';
import { readOnce } from '../../../../src/worker/run/read.js';
import { eventually } from '../../../helpers/stack.js';
import { fateOf, type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

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

async function batching(concurrency = 2, tenantCaps: Record<string, number> = {}) {
  w = await inMemoryWorker([index], { options: { concurrency, tenantCaps } });
  const activity = new Activity(concurrency, w.ctx.report.onError);
  const scheduler = new Scheduler([queueState({ url: w.url, weight: 1, priority: 'normal', deadLetterQueueUrl: undefined })]);
  let b: Batching;
  const wake = () => b.pump();
  const { fate } = fateOf(w.ctx, w.acts, scheduler, activity, wake);
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
    await w.acts.deletes.flush();
    await w.acts.visibility.flush();
  };
  return { b, activity, admitAll, settled };
}

/** Receive two messages and admit them, keeping their leases (to abort them). */
async function admitTwo(b: Batching) {
  const leases = [await w.receive(), await w.receive()];
  for (const lease of leases) {
    const read = readOnce(w.ctx.config.jobs, lease);
    if (!read.ok) throw new Error(read.detail);
    b.admit(lease, read, read.job as AnyBatchJob);
  }
  return leases;
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

  it('an item whose lease is lost while it waits leaves its batch at once, unrun and undeleted, even after an earlier abort', async () => {
    const { b } = await batching();
    await w.send('index', { doc: 'a', shard: 's1' });
    await w.send('index', { doc: 'b', shard: 's1' });
    const leases = await admitTwo(b);
    await eventually(() => b.held === 2, 'both claimed and held');
    leases[0]!.abort('LEASE_LOST', 'SQS refused the extension');
    // No pump is asked for: the abort itself wakes the batching.
    await eventually(() => b.held === 1, 'the lost item out of its batch');
    // One whose signal fired for another reason first (stopping) is still taken out when it is lost.
    leases[1]!.abort('SHUTDOWN', 'the worker is stopping');
    await new Promise((r) => setTimeout(r, 50));
    expect(b.held).toBe(1);
    leases[1]!.abort('LEASE_LOST', 'its visibility ran out');
    await eventually(() => b.held === 0, 'the second lost item out of its batch');
    expect(flushed).toEqual([]);
    expect(w.memory.peek(w.url)).toHaveLength(2); // neither deleted: lost ones come back from SQS
  });

  it('an item cancelled while it waits leaves its batch at once and is deleted; its neighbour stays', async () => {
    const { b } = await batching();
    await w.send('index', { doc: 'a', shard: 's1' });
    await w.send('index', { doc: 'b', shard: 's1' });
    const leases = await admitTwo(b);
    await eventually(() => b.held === 2, 'both claimed and held');
    leases[0]!.abort('CANCELLED', 'job a was cancelled');
    await eventually(() => b.held === 1, 'the cancelled item out of its batch');
    await eventually(() => w.memory.peek(w.url).length === 1, 'the cancelled item deleted');
    expect(flushed).toEqual([]);
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

  it('a tenant at its cap keeps its items out of the call; they run once a permit frees', async () => {
    const { admitAll, b } = await batching(2, { acme: 1 });
    // acme's one permit is held elsewhere (another worker's job).
    expect(await w.permits.take('acme', 1, 'elsewhere', 60)).toBe(0);
    await w.send('index', { doc: 'a1', shard: 's1' }, { tenant: 'acme' });
    await w.send('index', { doc: 'b1', shard: 's1' }, { tenant: 'beta' });
    await w.send('index', { doc: 'a2', shard: 's1' }, { tenant: 'acme' });
    await admitAll();
    await eventually(() => flushed.length === 1, 'the batch to flush without acme');
    expect(flushed[0]).toEqual(['b1']);
    // acme's items wait in the buffer, held invisible, not re-sent.
    await new Promise((r) => setTimeout(r, 300));
    expect(flushed).toHaveLength(1);
    expect(b.held).toBe(2);
    expect(w.memory.peek(w.url).filter((m) => m.visibleInMs === 0)).toEqual([]);
    // Back in their batch, which flushes by the usual rules (here: full again) once a permit frees.
    await w.permits.release('acme', 0, 'elsewhere');
    await w.send('index', { doc: 'a3', shard: 's1' }, { tenant: 'acme' });
    await admitAll();
    await eventually(() => flushed.length === 2, 'acme’s items to flush once its permit frees');
    expect(flushed[1]!.sort()).toEqual(['a1', 'a2', 'a3']);
    expect(w.events.filter((e) => e === 'job:deferred')).toEqual([]);
  });

  it('a call counts as one of each tenant’s running jobs: two batches of a tenant capped at 1 never run at once', async () => {
    let running = 0;
    let most = 0;
    const slow = defineBatchJob({
      name: 'slow',
      args: z.object({ doc: z.string(), shard: z.string() }),
      key: (a) => a.shard,
      maxSize: 2,
      maxWaitMs: 60_000,
      handle: async (items) => {
        running++;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 100));
        running--;
        flushed.push(items.map((i) => i.args.doc));
      },
    });
    w = await inMemoryWorker([slow], { options: { concurrency: 2, tenantCaps: { acme: 1 } } });
    const activity = new Activity(2, w.ctx.report.onError);
    const scheduler = new Scheduler([queueState({ url: w.url, weight: 1, priority: 'normal', deadLetterQueueUrl: undefined })]);
    let b: Batching;
    const wake = () => b.pump();
    b = new Batching(w.ctx, activity, fateOf(w.ctx, w.acts, scheduler, activity, wake).fate, wake);
    for (const [doc, shard] of [
      ['a', 's1'],
      ['b', 's1'],
      ['c', 's2'],
      ['d', 's2'],
    ] as const) {
      await w.send('slow', { doc, shard }, { tenant: 'acme' });
      const lease = await w.receive();
      const read = readOnce(w.ctx.config.jobs, lease);
      if (!read.ok) throw new Error(read.detail);
      b.admit(lease, read, read.job as AnyBatchJob);
    }
    await eventually(() => flushed.length === 2, 'both batches to flush');
    expect(most).toBe(1);
    expect(flushed.flat().sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('knows which queues bring only batch jobs, by their last receive that brought any, and the room left in its budget', async () => {
    const plain = defineJob({ name: 'plain', args: z.object({}), handle: () => {} });
    w = await inMemoryWorker([index, plain], { options: { maxHeldBatchItems: 4 } });
    const activity = new Activity(2, w.ctx.report.onError);
    const scheduler = new Scheduler([queueState({ url: w.url, weight: 1, priority: 'normal', deadLetterQueueUrl: undefined })]);
    const { fate } = fateOf(w.ctx, w.acts, scheduler, activity, () => {});
    const b = new Batching(w.ctx, activity, fate, () => {});
    expect(b.feeds.feeds(w.url)).toBe(false);
    expect(b.room()).toBe(4);
    await w.send('index', { doc: 'a', shard: 's1' });
    const batchOnly = await w.receive();
    b.feeds.received(w.url, 10, [batchOnly]);
    expect(b.feeds.feeds(w.url)).toBe(true);
    b.feeds.received(w.url, 10, []);
    expect(b.feeds.feeds(w.url)).toBe(true); // an empty receive says nothing
    await w.send('plain', {});
    await w.send('index', { doc: 'b', shard: 's1' });
    b.feeds.received(w.url, 10, [await w.receive(), await w.receive()]);
    expect(b.feeds.feeds(w.url)).toBe(false); // another job's message among them: it takes turns for handler room
    const read = readOnce(w.ctx.config.jobs, batchOnly);
    if (!read.ok) throw new Error(read.detail);
    b.admit(batchOnly, read, read.job as AnyBatchJob);
    expect(b.room()).toBe(3);
    await b.stop();
  });
});
