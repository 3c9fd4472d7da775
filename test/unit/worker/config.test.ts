import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { resolveWorkerConfig } from '../../../src/worker/config.js';

const job = defineJob({ name: 'x', args: z.object({}), handle: () => {} });
const url = 'http://127.0.0.1:4566/000000000000/jobs';
const fifo = 'http://127.0.0.1:4566/000000000000/jobs.fifo';
const lanes = (options: Record<string, unknown>) =>
  resolveWorkerConfig({ queues: [url], jobs: [job], memcached: '127.0.0.1:1', ...options }, {}).queues.map((q) => [
    q.url.split('/').at(-1),
    q.priority,
    q.weight,
  ]);

describe('worker tiers', () => {
  it('tiers: true serves the first queue with its -high and -low lanes, picked strictly', () => {
    expect(lanes({ tiers: true })).toEqual([
      ['jobs-high', 'high', 1],
      ['jobs', 'normal', 1],
      ['jobs-low', 'low', 1],
    ]);
    const c = resolveWorkerConfig({ queues: [fifo], jobs: [job], memcached: '127.0.0.1:1', tiers: true }, {});
    expect(c.queues.map((q) => q.url.split('/').at(-1))).toEqual(['jobs-high.fifo', 'jobs.fifo', 'jobs-low.fifo']);
    expect(c.pick).toEqual({ mode: 'strict', minShare: 0.05 });
  });

  it("weighted: a lane's weight is its tier's times its own (a spillover queue stays normal)", () => {
    const spill = `${url}-spill`;
    const c = resolveWorkerConfig(
      { queues: [{ url, weight: 4 }, spill], jobs: [job], memcached: '127.0.0.1:1', tiers: { pick: 'weighted' } },
      {},
    );
    expect(c.pick).toEqual({ mode: 'weighted' });
    expect(c.queues.map((q) => [q.url.split('/').at(-1), q.weight])).toEqual([
      ['jobs-high', 6],
      ['jobs', 12],
      ['jobs-spill', 3],
      ['jobs-low', 1],
    ]);
  });

  it('lanes named in queues are served as given, without more', () => {
    const high = 'http://127.0.0.1:4566/000000000000/urgent';
    expect(lanes({ queues: [url, { url: high, priority: 'high' }], tiers: true })).toEqual([
      ['urgent', 'high', 1],
      ['jobs', 'normal', 1],
    ]);
  });

  it('refuses a bad tier setting, naming the field', () => {
    expect(() => lanes({ tiers: { pick: 'fastest' } })).toThrow(/options\.tiers/);
    expect(() => lanes({ queues: [{ url, priority: 'urgent' }] })).toThrow(/options\.queues\[0\]/);
  });
});
