import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../src/core/batch-job.js';
import { defineJob } from '../../../src/core/job.js';
import { Pauses } from '../../../src/ops/pauses.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { createWorker } from '../../../src/worker/worker.js';
import { eventually, sleep } from '../../helpers/stack.js';
import { recordEvents, UNIT_WORKER } from '../../helpers/worker.js';

/*
 * A worker and the pauses in its job store, over the in-memory queue and store (both pass the
 * contract tests of SQS's and DynamoDB's): without memcached it reads the store each second.
 */
function setup() {
  const memory = new MemoryQueue();
  const url = memory.create('jobs', { deadLetterQueueUrl: memory.create('jobs-dlq'), maxReceiveCount: 3 });
  const store = new MemoryJobStore();
  const pauses = new Pauses({ controls: store.controls, notices: undefined, close: () => {} });
  return { memory, url, store, pauses };
}

describe('a worker while a job type is paused', () => {
  it('holds a paused job (no receive spent) and starts it within about a second of the resume', async () => {
    const { memory, url, store, pauses } = setup();
    const ran: string[] = [];
    const job = defineJob({ name: 'sync', args: z.object({ n: z.number() }), handle: (a) => void ran.push(`sync ${a.n}`) });
    const other = defineJob({ name: 'mail', args: z.object({ n: z.number() }), handle: (a) => void ran.push(`mail ${a.n}`) });
    await pauses.pause({ job: 'sync' }, { by: 'test' });
    const worker = createWorker({ queues: [url], jobs: [job, other], queue: memory, store, lock: new MemoryLock(), ...UNIT_WORKER }, {});
    const events = recordEvents(worker);
    await worker.start();
    await memory.send(url, {
      body: JSON.stringify({ v: 1, id: 'j1', job: 'sync', args: { n: 1 }, enqueuedAt: new Date().toISOString() }),
      attributes: {},
    });
    await memory.send(url, {
      body: JSON.stringify({ v: 1, id: 'j2', job: 'mail', args: { n: 2 }, enqueuedAt: new Date().toISOString() }),
      attributes: {},
    });
    await eventually(() => ran.includes('mail 2'), 'the other job type ran');
    await sleep(500);
    expect(ran).toEqual(['mail 2']);
    expect(events.of('job:waiting')).toEqual([expect.objectContaining({ jobName: 'sync', limit: 'paused' })]);
    const resumed = Date.now();
    await pauses.resume({ job: 'sync' });
    await eventually(() => ran.includes('sync 1'), 'the held job ran after the resume', 5_000);
    expect(Date.now() - resumed).toBeLessThan(2_500);
    expect(events.of('job:start').find((e) => e.jobName === 'sync')?.attempt).toBe(1);
    await worker.stop();
  });

  it("defers a paused batch job's items (they are not held) and runs none of them", async () => {
    const { memory, url, store, pauses } = setup();
    const ran: number[] = [];
    const job = defineBatchJob({
      name: 'index',
      args: z.object({ n: z.number() }),
      maxSize: 5,
      maxWaitMs: 100,
      handle: (items) => void ran.push(...items.map((i) => i.args.n)),
    });
    await pauses.pause({ job: 'index' }, { by: 'test' });
    const worker = createWorker({ queues: [url], jobs: [job], queue: memory, store, lock: new MemoryLock(), ...UNIT_WORKER }, {});
    const events = recordEvents(worker);
    await worker.start();
    for (const n of [1, 2])
      await memory.send(url, {
        body: JSON.stringify({ v: 1, id: `b${n}`, job: 'index', args: { n }, enqueuedAt: new Date().toISOString() }),
        attributes: {},
      });
    await eventually(() => events.of('job:deferred').length === 2, 'both items deferred');
    expect(events.of('job:deferred').map((e) => [e.limit, e.delaySeconds])).toEqual([
      ['paused', 10],
      ['paused', 10],
    ]);
    await sleep(300);
    expect(ran).toEqual([]);
    await worker.stop();
  });
});

describe('a schedule while its job type is paused (its overlap rule decides)', () => {
  it('skip: the first occurrence waits, the later ones are skipped, one runs after the resume; allow: each runs after it', async () => {
    const { defineSchedule } = await import('../../../src/schedules/define.js');
    const { storedSpec } = await import('../../../src/schedules/stored.js');
    for (const overlap of ['skip', 'allow'] as const) {
      const { memory, url, store, pauses } = setup();
      const ran: string[] = [];
      const job = defineJob({ name: 'ping', args: z.object({}), handle: (_a, ctx) => void ran.push(ctx.jobId) });
      const startS = Math.floor(Date.now() / 1000) + 1;
      const def = defineSchedule({ id: `beat-${overlap}`, job, args: {}, every: '1s', start: new Date(startS * 1000), overlap });
      await store.schedules.putSchedule({ id: def.id, owner: 'runtime', spec: storedSpec(def, url), next: startS });
      await pauses.pause({ job: 'ping' }, { by: 'test' });
      const worker = createWorker(
        { queues: [url], jobs: [job], queue: memory, store, lock: new MemoryLock(), schedules: true, ...UNIT_WORKER },
        {},
      );
      await worker.start();
      await sleep(2_500);
      expect(ran).toEqual([]);
      const fired = (await store.schedules.getSchedule(def.id))!;
      await pauses.resume({ job: 'ping' });
      if (overlap === 'skip') {
        await eventually(() => ran.length === 1, 'the waiting occurrence ran after the resume', 5_000);
        expect(fired.skipped).toBeGreaterThanOrEqual(1);
      } else {
        const sent = fired.lastFired! - startS + 1;
        await eventually(() => ran.length >= sent, 'each occurrence sent ran after the resume', 5_000);
        expect(fired.skipped).toBe(0);
      }
      await worker.stop();
    }
  }, 20_000);
});
