import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_BACKOFF } from '../../../../src/core/definition-rules.js';
import { defineJob } from '../../../../src/core/job.js';
import type { JobInfo } from '../../../../src/core/job-events.js';
import { Activity } from '../../../../src/worker/activity.js';
import type { Fate } from '../../../../src/worker/fate/conclude.js';
import { afterRun, type Outcome } from '../../../../src/worker/decide/decide.js';
import { afterRateSlot, afterPermit } from '../../../../src/worker/decide/decide-turn.js';
import type { Lease } from '../../../../src/worker/hold/lease.js';
import { Scheduler } from '../../../../src/worker/intake/scheduler.js';
import type { QueueState } from '../../../../src/worker/queue-state.js';
import { readOnce } from '../../../../src/worker/run/read.js';
import type { WaitingRoom } from '../../../../src/worker/turns/room.js';
import { fateOf, type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

/*
 * Fate.conclude: where a started message's outcome goes. Settled (deleted, handed back, re-sent);
 * kept here waiting for its tenant's permit or its rate slot (held, its claims let go, no receive
 * spent); or, on FIFO, retried in place ahead of its group. On the in-memory queue, lock and
 * permits; what the queue, the lock and the scheduler hold afterwards is the check.
 */

const job = defineJob({ name: 'step', args: z.object({ n: z.number() }), handle: () => {} });
const receives = { count: 1, attempt: 1, max: 3 };

interface Harness extends InMemoryWorker {
  readonly fate: Fate;
  readonly room: WaitingRoom;
  readonly scheduler: Scheduler<QueueState>;
  readonly activity: Activity;
  /** How many times the fate asked the worker to start what can start. */
  woken: number;
  /** Receive one message as dispatch would: buffered, then taken to start, its job id claimed. */
  start(): Promise<{ lease: Lease; info: JobInfo }>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    h.room.close();
    await h.close();
  }
});

async function harness(queueName = 'jobs'): Promise<Harness> {
  const w = await inMemoryWorker([job], { queueName, options: { tenantCaps: { acme: 1 } } });
  const scheduler = new Scheduler([w.ctx.queueOf(w.url)]);
  const activity = new Activity(10, (where) => w.errors.push(where));
  const { fate, room } = fateOf(w.ctx, w.acts, scheduler, activity, () => h.woken++);
  const h: Harness = {
    ...w,
    scheduler,
    activity,
    woken: 0,
    fate,
    room,
    async start() {
      const lease = await w.receive();
      scheduler.add(w.url, [lease]);
      expect(scheduler.next()?.lease).toBe(lease);
      const read = readOnce(w.ctx.config.jobs, lease);
      const jobId = read.info.jobId;
      expect(await w.lock.claim(jobId, 'token', 60, { messageId: lease.message.messageId, receiveCount: 1 })).toBe('claimed');
      lease.hold({ lock: { jobId, token: 'token' } });
      return { lease, info: read.info };
    },
  };
  harnesses.push(h);
  return h;
}

const succeeded: Outcome = afterRun({
  execution: { kind: 'returned', value: undefined, processMs: 1 },
  receiveCount: 1,
  attempt: 1,
  maxReceiveCount: 3,
  backoff: DEFAULT_BACKOFF,
  waitMs: 0,
});
/** What another claim of `jobId` finds: 'claimed' when the lock was let go (that probe's claim is let go again). */
async function lockState(h: Harness, jobId: string): Promise<string> {
  const found = await h.lock.claim(jobId, 'probe', 60);
  if (found === 'claimed') await h.lock.release(jobId, 'probe');
  return found === 'claimed' ? 'free' : found;
}
const failed = (delayMs: number): Outcome => ({ kind: 'retry', error: new Error('boom'), delayMs, processMs: 1, abandoned: false });

describe('Fate.conclude', () => {
  it('settles a success: the message deleted, the lock marked done', async () => {
    const h = await harness();
    await h.send('step', { n: 1 });
    const { lease, info } = await h.start();
    h.fate.conclude(lease, info, succeeded);
    await h.activity.settled();
    await h.acts.deletes.flush();
    expect(await h.memory.counts(h.url)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await lockState(h, info.jobId)).toBe('completed');
    expect(h.scheduler.size).toBe(0);
  });

  it("keeps a job at its tenant's cap waiting here: held, its lock let go, started again when a permit frees", async () => {
    const h = await harness();
    await h.send('step', { n: 1 }, { tenant: 'acme' });
    const { lease, info } = await h.start();
    const outcome = afterPermit({
      permit: 'full',
      tenant: 'acme',
      cap: 1,
      capDelaySeconds: 5,
      canWait: true,
      waitRetryMs: 60_000,
      receives,
      leaseLost: false,
      stopping: false,
    });
    expect(outcome).toMatchObject({ kind: 'wait' });
    h.fate.conclude(lease, info, outcome as Outcome);
    expect(h.room.waiting()).toBe(1); // counted from the moment it is on its way
    await h.activity.settled();
    expect(h.room.waiting(h.url)).toBe(1);
    expect(h.room.waitingFor('acme')).toBe(1);
    expect(h.scheduler.hasWaited(lease)).toBe(true);
    expect(h.scheduler.next()).toBeUndefined(); // waits for a permit, not for a time
    expect(await h.memory.counts(h.url)).toMatchObject({ visible: 0, inFlight: 1 }); // still held: no receive spent
    expect(await lockState(h, info.jobId)).toBe('free');
    expect(h.events).toEqual(['job:waiting']); // told once, on its first wait
    // A permit of its tenant given back here: it may start, and the worker is told to look.
    expect(h.scheduler.permitFreed('acme')).toBe(true);
    expect(h.scheduler.next()?.lease).toBe(lease);
  });

  it('keeps a job at its rate limit waiting until its slot, then wakes the worker', async () => {
    const h = await harness();
    await h.send('step', { n: 1 });
    const { lease, info } = await h.start();
    const at = Date.now() + 50;
    const outcome = afterRateSlot({
      slot: { at, reserved: true },
      now: Date.now(),
      what: 'job "step"',
      perSecond: 1,
      canWait: true,
      waitLimitMs: 60_000,
      fifo: false,
      receives,
      leaseLost: false,
      stopping: false,
    });
    h.fate.conclude(lease, info, outcome as Outcome);
    await h.activity.settled();
    expect(h.scheduler.next()).toBeUndefined();
    await expect.poll(() => h.woken, { timeout: 2_000 }).toBeGreaterThan(0);
    expect(h.scheduler.next()?.lease).toBe(lease);
  });

  it('hands a waiting job back instead when the worker is stopping', async () => {
    const h = await harness();
    await h.send('step', { n: 1 }, { tenant: 'acme' });
    const { lease, info } = await h.start();
    h.ctx.stop.abort();
    h.fate.conclude(lease, info, {
      kind: 'wait',
      reason: 'at its cap',
      limit: 'tenant-cap',
      until: { permitOf: 'acme', retryMs: 100 },
    } as Outcome);
    await h.activity.settled();
    await h.acts.visibility.flush();
    expect(await h.memory.counts(h.url)).toMatchObject({ visible: 1, inFlight: 0 });
    expect(h.room.waiting()).toBe(0);
  });

  it('FIFO: retries a failed job in place, ahead of its group, its lock let go, after its delay', async () => {
    const h = await harness('jobs.fifo');
    await h.send('step', { n: 1 }, { groupId: 'g' });
    const { lease, info } = await h.start();
    h.fate.conclude(lease, info, failed(50));
    await expect.poll(() => h.woken, { timeout: 2_000 }).toBeGreaterThan(0);
    await h.activity.settled();
    expect(lease.retries).toBe(1);
    expect(await lockState(h, info.jobId)).toBe('free');
    expect(await h.memory.counts(h.url)).toMatchObject({ visible: 0, inFlight: 1 }); // never went back to SQS
    expect(h.scheduler.next()?.lease).toBe(lease);
  });

  it("FIFO: a job handed back takes its group's buffered messages back with it, behind it", async () => {
    const h = await harness('jobs.fifo');
    await h.send('step', { n: 1 }, { groupId: 'g' });
    await h.send('step', { n: 2 }, { groupId: 'g' });
    const { lease, info } = await h.start();
    const behind = await h.receive();
    h.scheduler.add(h.url, [behind]);
    expect(h.scheduler.next()).toBeUndefined(); // its group is busy
    h.fate.conclude(lease, info, { kind: 'hand-back', reason: 'x', delaySeconds: 0, abandoned: false } as Outcome);
    await h.activity.settled();
    await h.acts.visibility.flush();
    expect(h.scheduler.size).toBe(0);
    expect(await h.memory.counts(h.url)).toMatchObject({ visible: 2, inFlight: 0 });
  });
});
