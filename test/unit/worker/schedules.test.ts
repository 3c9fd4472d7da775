import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import type { JobStore } from '../../../src/ports/job-store.js';
import { defineSchedule } from '../../../src/schedules/define.js';
import { storedSpec } from '../../../src/schedules/stored.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { createWorker } from '../../../src/worker/worker.js';
import { eventually } from '../../helpers/stack.js';
import { UNIT_WORKER } from '../../helpers/worker.js';

const ping = defineJob({ name: 'ping', args: z.object({ to: z.string() }), handle: () => {} });

describe("a worker's schedule ticks (option schedules)", () => {
  it('need the job store: without one, or with one that keeps no schedules, the worker is refused with a clear error', () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const make = (store?: JobStore) => () =>
      createWorker({ queues: [url], jobs: [ping], queue: memory, schedules: true, store, ...UNIT_WORKER }, {});
    expect(make()).toThrow(ConfigError);
    expect(make()).toThrow(/options\.schedules: schedules are kept in the job store: set options\.store or SQS_JOBS_JOB_TABLE/);
    const bare = new MemoryJobStore();
    Object.defineProperty(bare, 'schedules', { value: undefined }); // a user's own store, from before schedules
    expect(make(bare)).toThrow(/options\.schedules: this job store keeps no schedules/);
  });

  it("fire an every-1s schedule's occurrences as jobs with their occurrence ids, tracked to completed, and stop with the worker", async () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs', { deadLetterQueueUrl: memory.create('jobs-dlq'), maxReceiveCount: 5 });
    const store = new MemoryJobStore();
    const ran: string[] = [];
    const job = defineJob({
      name: 'ping',
      args: z.object({ to: z.string() }),
      handle: (args, ctx) => void ran.push(`${ctx.jobId}>${args.to}`),
    });
    const startS = Math.floor(Date.now() / 1000);
    // allow: each occurrence is sent, however the ticks fall (skip would send the latest of two due at once).
    const def = defineSchedule({
      id: 'heartbeat',
      job,
      args: { to: 'ops' },
      every: '1s',
      start: new Date(startS * 1000),
      overlap: 'allow',
    });
    await store.schedules.putSchedule({ id: def.id, owner: 'runtime', spec: storedSpec(def, url), next: startS });
    const worker = createWorker(
      { queues: [url], jobs: [job], queue: memory, store, lock: new MemoryLock(), schedules: true, ...UNIT_WORKER },
      {},
    );
    await worker.start();
    await eventually(async () => ran.length >= 3, 'three occurrences run');
    await worker.stop();
    const fired = (await store.schedules.getSchedule('heartbeat'))!;
    expect(fired.claim).toBeUndefined();
    const ids = Array.from({ length: fired.lastFired! - startS + 1 }, (_, i) => `heartbeat:${startS + i}`);
    // Every occurrence from the start to the last fired ran once, in order; the worker stopped firing with its stop.
    expect(ran.filter((r) => r.endsWith('>ops')).map((r) => r.split('>')[0])).toEqual(ids.slice(0, ran.length));
    expect(ran.length).toBeGreaterThanOrEqual(ids.length - 1); // the last sent may still have been queued at the stop
    expect(await store.get(ids[0]!)).toMatchObject({ jobName: 'ping', state: 'completed' });
    const after = ran.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ran.length).toBe(after);
    expect((await store.schedules.getSchedule('heartbeat'))!.lastFired).toBe(fired.lastFired);
  });
});
