import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { shardOf } from '../../../src/ports/schedule-store.js';
import { defineSchedule, type ScheduleSpec } from '../../../src/schedules/define.js';
import { storedSpec } from '../../../src/schedules/stored.js';
import { CLAIM_S, type TickPorts, tickShard } from '../../../src/schedules/tick.js';
import { MemorySchedules } from '../../../src/testing/memory-schedules.js';

const report = defineJob({ name: 'report', args: z.object({ team: z.string() }), handle: () => {} });
const QUEUE = 'http://127.0.0.1:4566/000000000000/jobs';

/** A fleet of `workers` ticking one store, each with the sends it made; job states as a test sets them. */
async function fleet(spec: Partial<ScheduleSpec<typeof report>>, workers = 1) {
  const store = new MemorySchedules();
  const def = defineSchedule({ id: 'nightly', job: report, args: { team: 'a' }, every: '1m', ...spec } as ScheduleSpec<typeof report>);
  const first = def.occurrences.next(-1)!;
  await store.putSchedule({ id: def.id, owner: 'app:test', spec: storedSpec(def, QUEUE), next: first });
  const sent: string[] = [];
  const states = new Map<string, { state: string; updatedAtS: number }>();
  const held = new Set<string>();
  const problems: string[] = [];
  const failSends = { on: false };
  const slowSends = { by: 0 };
  const refuse = { with: undefined as string | undefined };
  const clock = { nowS: 0 };
  const stop = new AbortController();
  const stopAfter = { sends: 0 };
  const ports = Array.from(
    { length: workers },
    (_, i): TickPorts => ({
      store,
      me: `w${i}`,
      staleRunningS: 120,
      signal: stop.signal,
      has: (job) => job === 'report',
      now: () => clock.nowS,
      async send(o) {
        if (failSends.on) throw new Error('SQS unreachable');
        if (refuse.with !== undefined) return { refused: refuse.with };
        clock.nowS += slowSends.by;
        expect(o).toMatchObject({ job: 'report', args: { team: 'a' }, queueUrl: QUEUE });
        sent.push(o.jobId);
        if (sent.length === stopAfter.sends) stop.abort();
        return undefined;
      },
      stateOf: async (jobId) => states.get(jobId),
      held: async (jobId) => held.has(jobId),
      onProblem: (id, problem) => problems.push(`${id}: ${problem}`),
    }),
  );
  const tick = (worker: number, nowS: number) => {
    clock.nowS = nowS;
    return tickShard(ports[worker]!, shardOf(def.id));
  };
  return { store, def, sent, states, held, stopAfter, refuse, problems, failSends, slowSends, tick };
}

describe('the schedule tick', () => {
  it('fires each occurrence once however many workers tick at once, each with its deterministic job id', async () => {
    const f = await fleet({}, 3);
    for (let now = 0; now <= 180; now += 1) await Promise.all([f.tick(0, now), f.tick(1, now), f.tick(2, now)]);
    expect(f.sent).toEqual(['nightly:0', 'nightly:60', 'nightly:120', 'nightly:180']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 240, lastFired: 180, skipped: 0, claim: undefined });
  });

  it('a tick that dies after its claim: once the claim lapses, the next tick sends the same job id again', async () => {
    const f = await fleet({});
    await f.store.claimSchedule('nightly', { next: 0, revision: 1 }, { by: 'dead:1', untilS: CLAIM_S, nowS: 0 }); // claimed, never advanced
    await f.tick(0, 1);
    expect(f.sent).toEqual([]);
    await f.tick(0, CLAIM_S);
    expect(f.sent).toEqual(['nightly:0']);
  });

  it('a tick stopped mid-way sends nothing more: the first occurrence not sent is left due, unclaimed', async () => {
    const f = await fleet({ overlap: 'allow', catchUp: { within: '1h' } });
    f.stopAfter.sends = 2; // catching up 0, 60, 120, 180, 240, 300: the worker stops after two sends
    await f.tick(0, 300);
    expect(f.sent).toEqual(['nightly:0', 'nightly:60']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 120, lastFired: 60, claim: undefined });
  });

  it('an occurrence the producer refuses for good (args its job no longer takes) is said and skipped; the schedule goes on', async () => {
    const f = await fleet({});
    f.refuse.with = 'invalid args: team: expected number';
    await f.tick(0, 0);
    expect(f.problems).toEqual(['nightly: occurrence 0 skipped: invalid args: team: expected number']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 60, skipped: 1, lastFired: undefined, claim: undefined });
    f.refuse.with = undefined; // the job's schema or the schedule fixed
    await f.tick(0, 60);
    expect(f.sent).toEqual(['nightly:60']);
  });

  it('a send that fails leaves the occurrence due: said, and sent again after the claim lapses', async () => {
    const f = await fleet({});
    f.failSends.on = true;
    await f.tick(0, 0);
    expect(f.problems).toEqual(['nightly: occurrence 0 not sent: SQS unreachable']);
    f.failSends.on = false;
    await f.tick(0, CLAIM_S - 1);
    expect(f.sent).toEqual([]);
    await f.tick(0, CLAIM_S);
    expect(f.sent).toEqual(['nightly:0']);
  });

  it("catch-up 'latest' after every worker was down: the latest runs, the rest are counted skipped", async () => {
    const f = await fleet({ catchUp: 'latest' });
    await f.tick(0, 20 * 60 + 5);
    expect(f.sent).toEqual(['nightly:1200']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 1_260, skipped: 20 });
  });

  it("overlap 'skip': an occurrence whose predecessor still runs is skipped; one left running by a dead worker blocks no longer than staleRunningS", async () => {
    const f = await fleet({ overlap: 'skip' });
    await f.tick(0, 0);
    f.states.set('nightly:0', { state: 'running', updatedAtS: 0 });
    await f.tick(0, 60);
    expect(f.sent).toEqual(['nightly:0']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 120, lastFired: 0, skipped: 1 });
    await f.tick(0, 120); // still "running" at 120 s: its worker died (staleRunningS 120)
    expect(f.sent).toEqual(['nightly:0', 'nightly:120']);
    f.states.set('nightly:120', { state: 'completed', updatedAtS: 130 });
    await f.tick(0, 180);
    expect(f.sent).toEqual(['nightly:0', 'nightly:120', 'nightly:180']);
  });

  it("overlap 'skip': a run the lock shows held blocks its schedule however long it runs, past staleRunningS", async () => {
    const f = await fleet({ overlap: 'skip' });
    await f.tick(0, 0);
    f.states.set('nightly:0', { state: 'running', updatedAtS: 0 });
    f.held.add('nightly:0'); // its worker's heartbeat keeps the lock
    for (const now of [60, 120, 180, 240]) await f.tick(0, now);
    expect(f.sent).toEqual(['nightly:0']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 300, lastFired: 0, skipped: 4 });
    f.held.delete('nightly:0'); // the worker died: the lock lapsed, the record still says running
    await f.tick(0, 300);
    expect(f.sent).toEqual(['nightly:0', 'nightly:300']);
  });

  it("overlap 'buffer-one': the occurrence waits for its predecessor, then runs", async () => {
    const f = await fleet({ overlap: 'buffer-one' });
    await f.tick(0, 0);
    f.states.set('nightly:0', { state: 'running', updatedAtS: 0 });
    await f.tick(0, 60);
    expect(f.sent).toEqual(['nightly:0']);
    f.states.set('nightly:0', { state: 'completed', updatedAtS: 70 });
    await f.tick(0, 70); // the waiting occurrence is held by the claim until it lapses
    expect(f.sent).toEqual(['nightly:0']);
    await f.tick(0, 60 + CLAIM_S);
    expect(f.sent).toEqual(['nightly:0', 'nightly:60']);
  });

  it('leaves the schedule of a job it does not have to a worker that has it, without claiming it', async () => {
    const f = await fleet({});
    const other = defineJob({ name: 'invoice', args: z.object({}), handle: () => {} });
    const def = defineSchedule({ id: 'nightly', job: other, args: {}, every: '1m' });
    await f.store.putSchedule({ id: 'nightly', owner: 'app:test', spec: storedSpec(def, QUEUE), next: 0 });
    expect(await f.tick(0, 0)).toMatchObject({ fired: 0, notMine: 1 });
    expect(f.sent).toEqual([]);
    expect((await f.store.getSchedule('nightly'))?.claim).toBeUndefined();
  });

  it('reads past the schedules it leaves alone: 40 of another app’s at the front of the shard do not starve its own', async () => {
    const f = await fleet({ every: '1m' });
    const other = defineJob({ name: 'invoice', args: z.object({}), handle: () => {} });
    let put = 0;
    for (let n = 0; put < 40; n++) {
      const def = defineSchedule({ id: `other-${n}`, job: other, args: {}, every: '1m' });
      if (shardOf(def.id) !== shardOf('nightly')) continue;
      await f.store.putSchedule({ id: def.id, owner: 'app:other', spec: storedSpec(def, QUEUE), next: -60 }); // due before ours
      put++;
    }
    expect(await f.tick(0, 0)).toMatchObject({ fired: 1 });
    expect(f.sent).toEqual(['nightly:0']);
  });

  it("catching up with overlap 'skip': only the latest is sent (together they would overlap); with 'allow', each", async () => {
    const f = await fleet({ overlap: 'skip', catchUp: { within: '1h' } });
    await f.tick(0, 600);
    expect(f.sent).toEqual(['nightly:600']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 660, lastFired: 600, skipped: 10 });
    const all = await fleet({ overlap: 'allow', catchUp: { within: '1h' } });
    await all.tick(0, 600);
    expect(all.sent).toEqual(Array.from({ length: 11 }, (_, k) => `nightly:${k * 60}`));
    expect(await all.store.getSchedule('nightly')).toMatchObject({ next: 660, lastFired: 600, skipped: 0 });
  });

  it("overlap 'buffer-one' keeps the waiting occurrence however late it gets, even with catchUp 'none'", async () => {
    const f = await fleet({ overlap: 'buffer-one', catchUp: 'none', every: '5m' });
    await f.tick(0, 0);
    f.states.set('nightly:0', { state: 'running', updatedAtS: 0 });
    await f.tick(0, 300); // 300 is kept, waiting for 0
    f.states.set('nightly:0', { state: 'completed', updatedAtS: 420 });
    await f.tick(0, 420); // 2 minutes late: still sent, as it was kept
    expect(f.sent).toEqual(['nightly:0', 'nightly:300']);
    expect(await f.store.getSchedule('nightly')).toMatchObject({ next: 600, lastFired: 300 });
  });

  it('stops sending before its claim lapses, leaves the rest due, and the next tick sends them: none twice', async () => {
    const f = await fleet({ overlap: 'allow', catchUp: { within: '1h' } });
    f.slowSends.by = 4; // each send takes 4 s of the claim's 30
    await f.tick(0, 600);
    expect(f.sent.length).toBeLessThan(11);
    f.slowSends.by = 0;
    await f.tick(0, 660);
    expect(f.sent).toEqual(Array.from({ length: 12 }, (_, k) => `nightly:${k * 60}`)); // 0 … 660, each once
  });

  it('leaves a schedule it cannot read alone, and says why', async () => {
    const f = await fleet({});
    await f.store.putSchedule({ id: 'nightly', owner: 'app:test', spec: '{"v":2}', next: 0 });
    await f.tick(0, 0);
    expect(f.sent).toEqual([]);
    expect(f.problems[0]).toMatch(/^nightly: its spec is not one this version reads/);
  });
});
