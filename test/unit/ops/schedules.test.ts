import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEnvelope } from '../../../src/core/envelope.js';
import { defineJob } from '../../../src/core/job.js';
import { Schedules } from '../../../src/ops/schedules.js';
import { createProducer } from '../../../src/producer/producer.js';
import { defineSchedule } from '../../../src/schedules/define.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

const report = defineJob({ name: 'report', args: z.object({ team: z.string() }), handle: () => {} });
const nightly = (id: string, cron = '0 3 * * *') => defineSchedule({ id, job: report, args: { team: 'all' }, cron, tz: 'Europe/Berlin' });

function schedules() {
  const memory = new MemoryQueue();
  const url = memory.create('jobs');
  const store = new MemoryJobStore();
  const s = new Schedules({
    store,
    queueUrl: () => url,
    producer: (queueUrl) => createProducer({ queueUrl, queue: memory, store }, {}),
    close: () => {},
  });
  return { s, store, memory, url };
}

describe('schedules, steered (createSchedules)', () => {
  it('sync puts an app’s declared schedules, says what changed, and a second sync changes nothing', async () => {
    const { s } = schedules();
    expect(await s.sync([nightly('a'), nightly('b')], { app: 'billing' })).toEqual([
      { id: 'a', change: 'created' },
      { id: 'b', change: 'created' },
    ]);
    expect(await s.sync([nightly('a'), nightly('b')], { app: 'billing' })).toEqual([
      { id: 'a', change: 'unchanged' },
      { id: 'b', change: 'unchanged' },
    ]);
    expect(await s.sync([nightly('a', '0 4 * * *')], { app: 'billing', dryRun: true })).toEqual([
      { id: 'a', change: 'updated' },
      { id: 'b', change: 'removed' },
    ]);
    expect((await s.get('a'))?.cron).toBe('0 3 * * *'); // the dry run wrote nothing
    expect(await s.sync([nightly('a', '0 4 * * *')], { app: 'billing' })).toEqual([
      { id: 'a', change: 'updated' },
      { id: 'b', change: 'removed' },
    ]);
    expect(await s.get('b')).toBeUndefined();
  });

  it("sync removes only its own app's schedules: never another app's, never run-time ones; a taken id is refused", async () => {
    const { s } = schedules();
    await s.sync([nightly('billing-nightly')], { app: 'billing' });
    await s.upsert(nightly('acme:monday', '0 9 * * 1'));
    expect(await s.sync([], { app: 'search' })).toEqual([]);
    expect((await s.get('billing-nightly'))?.owner).toBe('app:billing');
    expect((await s.get('acme:monday'))?.owner).toBe('runtime');
    await expect(s.sync([nightly('billing-nightly')], { app: 'search' })).rejects.toThrow(
      /schedule billing-nightly is app:billing's already: give this one another id/,
    );
    await expect(s.upsert(nightly('billing-nightly', '0 5 * * *'))).rejects.toThrow(
      /schedule billing-nightly is app:billing's \(declared in code, put by `sqs-jobs schedules sync`\): change it there/,
    );
    await expect(s.sync([nightly('x'), nightly('x')], { app: 'billing' })).rejects.toThrow(/schedule x is declared twice/);
    await expect(s.sync([], { app: 'no spaces' })).rejects.toThrow(/app: must be 1-64 letters/);
  });

  it('shows a schedule: its rules, next occurrences in UTC, and after a fire the last job', async () => {
    const { s, store } = schedules();
    expect(await s.upsert(nightly('acme:nightly'))).toBe('created');
    expect(await s.upsert(nightly('acme:nightly'))).toBe('unchanged');
    const view = (await s.get('acme:nightly'))!;
    expect(view).toMatchObject({ id: 'acme:nightly', owner: 'runtime', job: 'report', args: { team: 'all' }, cron: '0 3 * * *' });
    expect(view).toMatchObject({ tz: 'Europe/Berlin', overlap: 'skip', catchUp: 'latest', paused: false, skipped: 0, revision: 1 });
    expect(view.upcoming).toHaveLength(3);
    expect(view.upcoming[0]).toBe(view.next);
    expect(view.upcoming.every((at) => /T0[12]:00:00\.000Z$/.test(at))).toBe(true); // 03:00 in Berlin is 01:00 or 02:00 UTC
    const r = (await store.schedules.getSchedule('acme:nightly'))!;
    await store.schedules.claimSchedule(r.id, { next: r.next!, revision: 1 }, { by: 't', untilS: r.next! + 30, nowS: r.next! });
    await store.schedules.advanceSchedule(
      r.id,
      { by: 't', from: r.next!, revision: 1 },
      { next: r.next! + 86_400, lastFired: r.next!, skipped: 0 },
    );
    expect(await s.get('acme:nightly')).toMatchObject({ lastFired: view.next, lastJobId: `acme:nightly:${r.next}` });
    expect((await s.list()).schedules.map((v) => v.id)).toEqual(['acme:nightly']);
  });

  it('a put fires from its start when that was at most 60 s ago, never from before the put without one, never an occurrence it fired', async () => {
    const { s, store } = schedules();
    const now = Math.floor(Date.now() / 1000);
    const every = (id: string, startS: number, args = { team: 'a' }) =>
      defineSchedule({ id, job: report, args, every: '1h', start: new Date(startS * 1000) });
    await s.upsert(every('moment', now - 5));
    expect((await store.schedules.getSchedule('moment'))?.next).toBe(now - 5);
    await s.upsert(every('older', now - 120));
    expect((await store.schedules.getSchedule('older'))?.next).toBe(now - 120 + 3_600);
    await s.upsert(defineSchedule({ id: 'no-start', job: report, args: { team: 'a' }, every: '1s' }));
    expect((await store.schedules.getSchedule('no-start'))?.next).toBeGreaterThanOrEqual(now);
    // A start 90 s ago on a 1-minute grid: an occurrence 30 s ago is from before the put, and does not run.
    await s.upsert(defineSchedule({ id: 'old-start', job: report, args: { team: 'a' }, every: '1m', start: new Date((now - 90) * 1000) }));
    expect((await store.schedules.getSchedule('old-start'))?.next).toBe(now + 30);
    // Fired, then changed within the minute: its next is the one after.
    await store.schedules.claimSchedule('moment', { next: now - 5, revision: 1 }, { by: 't', untilS: now + 30, nowS: now });
    await store.schedules.advanceSchedule(
      'moment',
      { by: 't', from: now - 5, revision: 1 },
      { next: now - 5 + 3_600, lastFired: now - 5, skipped: 0 },
    );
    expect(await s.upsert(every('moment', now - 5, { team: 'b' }))).toBe('updated');
    expect((await store.schedules.getSchedule('moment'))?.next).toBe(now - 5 + 3_600);
  });

  it('pause stops it being due, resume starts it from its next occurrence after now, remove takes it away', async () => {
    const { s, store } = schedules();
    await s.upsert(defineSchedule({ id: 'tick', job: report, args: { team: 'a' }, every: '1m' }));
    // Left behind by an hour (every worker was down), then paused.
    const put = (await store.schedules.getSchedule('tick'))!;
    await store.schedules.claimSchedule('tick', { next: put.next!, revision: 1 }, { by: 't', untilS: put.next! + 30, nowS: put.next! });
    await store.schedules.advanceSchedule(
      'tick',
      { by: 't', from: put.next!, revision: 1 },
      { next: put.next! - 3_600, lastFired: undefined, skipped: 0 },
    );
    expect(await s.pause('tick')).toBe(true);
    expect((await s.get('tick'))?.paused).toBe(true);
    const farFuture = Math.floor(Date.now() / 1000) + 10 * 365 * 86_400;
    expect(
      (await store.schedules.dueSchedules(0, farFuture, 10)).schedules.concat(
        ...(await Promise.all([1, 2, 3].map(async (shard) => (await store.schedules.dueSchedules(shard, farFuture, 10)).schedules))),
      ),
    ).toEqual([]);
    expect(await s.resume('tick')).toBe(true);
    const resumed = (await s.get('tick'))!;
    expect(resumed.paused).toBe(false);
    // From the next occurrence after now: the hour missed while left behind and paused is not caught up.
    expect(Date.parse(resumed.next!)).toBeGreaterThanOrEqual(Date.now() - 1_000);
    expect(Date.parse(resumed.next!)).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(await s.pause('nope')).toBe(false);
    expect(await s.resume('nope')).toBe(false);
    expect(await s.remove('tick')).toBe(true);
    expect(await s.remove('tick')).toBe(false);
  });

  it("trigger sends the schedule's job now, tracked, as this second's occurrence, and leaves its next alone", async () => {
    const { s, store, memory, url } = schedules();
    await s.upsert(nightly('acme:nightly'));
    const before = (await s.get('acme:nightly'))!.next;
    const sent = (await s.trigger('acme:nightly'))!;
    expect(sent.jobId).toMatch(/^acme:nightly:\d{10}$/);
    const [message] = await memory.receive(url, 10, 0, 30);
    expect(decodeEnvelope(message!.body, { messageId: message!.messageId, sentAt: 0 })).toMatchObject({
      ok: true,
      envelope: { id: sent.jobId, job: 'report', args: { team: 'all' } },
    });
    expect(await store.get(sent.jobId)).toMatchObject({ state: 'waiting', jobName: 'report' });
    expect((await s.get('acme:nightly'))!.next).toBe(before);
    expect(await s.trigger('nope')).toBeUndefined();
  });
});
