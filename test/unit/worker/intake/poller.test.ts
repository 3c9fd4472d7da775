import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../../src/core/job.js';
import type { Lease } from '../../../../src/worker/hold/lease.js';
import { ReceiveCapacity } from '../../../../src/worker/intake/capacity.js';
import { type Intake, pollQueue } from '../../../../src/worker/intake/poller.js';
import type { ScheduledQueue } from '../../../../src/worker/intake/scheduler.js';
import { eventually } from '../../../helpers/stack.js';
import { type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

/* One queue's receive loop, on the in-memory queue: what it holds, how much it asks for, how it stops. */

const step = defineJob({ name: 'step', args: z.object({}), handle: () => {} });
const lane = (url: string) => ({ url, fifo: false, weight: 1, rank: 1 });

let w: InMemoryWorker;
afterEach(() => w.close());

/** Wraps the in-memory queue's receive: how many receives are out now, and the most at once. Each takes `ms` (a round trip). */
function countReceives(ms: number) {
  const counts = { out: 0, most: 0 };
  const receive = w.memory.receive.bind(w.memory);
  w.memory.receive = async (...a) => {
    counts.out++;
    counts.most = Math.max(counts.most, counts.out);
    try {
      if (ms > 0) await new Promise((r) => setTimeout(r, ms));
      return await receive(...a);
    } finally {
      counts.out--;
    }
  };
  return counts;
}

function intake(limit: number) {
  const held: Lease[] = [];
  const asked: number[] = [];
  const capacity = new ReceiveCapacity<ScheduledQueue>(
    { concurrency: limit, prefetch: 0 },
    { running: () => held.length, buffered: () => 0 },
  );
  const i: Intake = {
    capacity,
    received: (_url, leases, n) => {
      asked.push(n);
      held.push(...leases);
    },
    receivedWhileStopping: async () => {},
  };
  return { i, held, asked, capacity };
}

describe('pollQueue', () => {
  it('asks for no more than the free capacity, and holds what it receives under the heartbeat', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 0 } });
    for (let k = 0; k < 5; k++) await w.send('step', {});
    const { i, held, asked, capacity } = intake(3);
    const loop = pollQueue(w.ctx, i, lane(w.url), 1);
    await eventually(() => held.length === 3, 'three messages held');
    expect(asked.every((n) => n <= 3)).toBe(true);
    expect(w.ctx.heartbeat.size).toBe(3);
    // At capacity: the other two stay in the queue, visible.
    expect(w.memory.peek(w.url).filter((m) => m.visibleInMs === 0)).toHaveLength(2);
    w.ctx.stop.abort();
    capacity.close();
    await loop;
  });

  it('backs off from a failing receive without holding capacity, reports it, and goes on', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 0 } });
    await w.send('step', {});
    const receive = w.memory.receive.bind(w.memory);
    let failures = 1;
    w.memory.receive = async (...a) => {
      if (failures-- > 0) throw new Error('connection reset');
      return receive(...a);
    };
    const { i, held, capacity } = intake(3);
    const loop = pollQueue(w.ctx, i, lane(w.url), 1);
    await eventually(() => held.length === 1, 'the message, after the failed receive');
    expect(w.errors).toEqual(['receive']);
    expect(capacity.reserved).toBeLessThanOrEqual(3);
    w.ctx.stop.abort();
    capacity.close();
    await loop;
  });

  it('opens more long polls while receives come back full, up to its most, and goes back to one when they come back short', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 1 } });
    for (let k = 0; k < 80; k++) await w.send('step', {});
    // Each receive takes 20 ms (a round trip), so loops that are open overlap.
    const receives = countReceives(20);
    const { i, held, capacity } = intake(1_000);
    const loop = pollQueue(w.ctx, i, lane(w.url), 3);
    await eventually(() => held.length === 80, 'every message held');
    expect(receives.most).toBe(3);
    // The queue is empty now: the extra loops' receives came back short and they ended; one long poll stays open.
    await eventually(() => receives.out === 1, 'one receive open');
    await new Promise((r) => setTimeout(r, 100));
    expect(receives.out).toBe(1);
    w.ctx.stop.abort();
    capacity.close();
    await loop;
  });

  it('opens no second long poll while the worker has no room for another full receive', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 0 } });
    for (let k = 0; k < 30; k++) await w.send('step', {});
    const receives = countReceives(20);
    const { i, held, capacity } = intake(15); // room for 15: after a full receive, 5 more at most
    const loop = pollQueue(w.ctx, i, lane(w.url), 4);
    await eventually(() => held.length === 15, 'the worker full');
    expect(receives.most).toBe(1);
    w.ctx.stop.abort();
    capacity.close();
    await loop;
  });

  it('keeps one long poll on a queue whose receives never come back full', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 0 } });
    const receives = countReceives(0);
    const { i, held, capacity } = intake(1_000);
    const loop = pollQueue(w.ctx, i, lane(w.url), 4);
    for (let k = 0; k < 5; k++) {
      await w.send('step', {});
      await eventually(() => held.length === k + 1, 'the message held');
    }
    expect(receives.most).toBe(1);
    w.ctx.stop.abort();
    capacity.close();
    await loop;
  });

  it('stops when the worker stops, handing back what a poll brings after that', async () => {
    w = await inMemoryWorker([step], { options: { waitTimeSeconds: 1 } });
    const { i, held, capacity } = intake(3);
    const late: Lease[] = [];
    const loop = pollQueue(w.ctx, { ...i, receivedWhileStopping: async (leases) => void late.push(...leases) }, lane(w.url), 1);
    await new Promise((r) => setTimeout(r, 100)); // the poll is open
    await w.send('step', {});
    w.ctx.stop.abort();
    await loop;
    capacity.close();
    expect(held).toEqual([]);
    expect(late).toHaveLength(1); // brought by the open poll after stop() began: handed back, not scheduled
  });
});
