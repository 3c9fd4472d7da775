import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoSchedules } from '../../src/adapters/dynamodb-schedules.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { NEVER_DUE, SCHEDULE_SHARDS, type ScheduleStore, shardOf } from '../../src/ports/schedule-store.js';
import { MemorySchedules } from '../../src/testing/memory-schedules.js';
import { eventually, LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The schedule store's contract, on DynamoDB Local (a fresh table, with the due index) and in
 * memory: puts by owner and revision, the due index, one claim at a time that lapses, an advance
 * only under its claim. DynamoDB's due reads are eventually consistent: those assertions wait.
 */
const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `schedules-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe('created');
});
afterAll(() => client.destroy());

const subjects: [string, ScheduleStore][] = [
  ['DynamoDB (DynamoDB Local)', new DynamoSchedules({ client, table, expiresAt: () => 0 })],
  ['in-memory', new MemorySchedules()],
];

const id = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const spec = (every: string) => JSON.stringify({ job: 'report', args: {}, every });

describe.each(subjects)('schedule store contract: %s', (_name, store) => {
  const dueIds = async (s: string, nowS: number) => (await store.dueSchedules(shardOf(s), nowS, 100)).schedules.map((r) => r.id);

  it('puts a schedule once per spec: created, unchanged, updated with a new revision; never over another owner’s', async () => {
    const s = id('nightly');
    expect(await store.putSchedule({ id: s, owner: 'app:billing', spec: spec('1h'), next: 3_600 })).toBe('created');
    expect(await store.putSchedule({ id: s, owner: 'app:billing', spec: spec('1h'), next: 7_200 })).toBe('unchanged');
    expect(await store.getSchedule(s)).toMatchObject({ owner: 'app:billing', revision: 1, next: 3_600, paused: false, skipped: 0 });
    expect(await store.putSchedule({ id: s, owner: 'app:billing', spec: spec('2h'), next: 7_200 })).toBe('updated');
    expect(await store.getSchedule(s)).toMatchObject({ spec: spec('2h'), revision: 2, next: 7_200 });
    expect(await store.putSchedule({ id: s, owner: 'runtime', spec: spec('5m'), next: 300 })).toBe('owned-by-other');
    expect((await store.getSchedule(s))?.spec).toBe(spec('2h'));
  });

  it('is due from its next occurrence on, and never while paused or with none left', async () => {
    const s = id('due');
    await store.putSchedule({ id: s, owner: 'runtime', spec: spec('1m'), next: 600 });
    await eventually(async () => (await dueIds(s, 600)).includes(s), 'due at 600');
    expect(await dueIds(s, 599)).not.toContain(s);
    expect(await store.pause(s)).toBe(true);
    await eventually(async () => !(await dueIds(s, NEVER_DUE - 1)).includes(s), 'paused: not due');
    expect(await store.resume(s, { revision: 2 }, 660)).toBe(false); // not its revision
    expect(await store.resume(s, { revision: 1 }, 660)).toBe(true);
    expect(await store.getSchedule(s)).toMatchObject({ paused: false, next: 660 });
    await eventually(async () => (await dueIds(s, 660)).includes(s), 'resumed: due at its next');
    const ended = id('ended');
    await store.putSchedule({ id: ended, owner: 'runtime', spec: spec('1m'), next: undefined });
    expect(await dueIds(ended, NEVER_DUE - 1)).not.toContain(ended);
    expect(await store.pause(id('none'))).toBe(false);
  });

  it('pages the due schedules of a shard', async () => {
    // Three schedules of one shard, due far in the past, so nothing another test puts comes before them.
    const mine: string[] = [];
    for (let n = 0; mine.length < 3; n++) {
      const s = id(`page${n}`);
      if (shardOf(s) === 0) mine.push(s);
    }
    for (const [i, s] of mine.entries()) await store.putSchedule({ id: s, owner: 'runtime', spec: spec('1h'), next: 10 + i });
    const seen: string[] = [];
    await eventually(async () => {
      seen.length = 0;
      let cursor: string | undefined;
      do {
        const page = await store.dueSchedules(0, 12, 1, cursor);
        expect(page.schedules.length).toBeLessThanOrEqual(1);
        seen.push(...page.schedules.map((r) => r.id));
        cursor = page.cursor;
      } while (cursor !== undefined);
      return mine.every((s) => seen.includes(s));
    }, 'every due schedule, one page at a time');
    expect(seen.filter((s) => mine.includes(s))).toEqual(mine); // soonest first
  });

  it('lets one tick claim an occurrence; a lapsed claim is claimed again; only the claimer advances it', async () => {
    const s = id('claim');
    await store.putSchedule({ id: s, owner: 'runtime', spec: spec('1m'), next: 600 });
    const seen = { next: 600, revision: 1 };
    expect(await store.claimSchedule(s, seen, { by: 'w1', untilS: 630, nowS: 601 })).toBe(true);
    expect(await store.claimSchedule(s, seen, { by: 'w2', untilS: 631, nowS: 602 })).toBe(false); // w1 holds it
    await eventually(async () => !(await dueIds(s, 629)).includes(s), 'claimed: not due until the claim lapses');
    expect(await store.claimSchedule(s, seen, { by: 'w2', untilS: 660, nowS: 630 })).toBe(true); // w1 died: lapsed
    expect(await store.advanceSchedule(s, { by: 'w1', from: 600, revision: 1 }, { next: 660, lastFired: 600, skipped: 0 })).toBe(false);
    expect(await store.advanceSchedule(s, { by: 'w2', from: 600, revision: 1 }, { next: 660, lastFired: 600, skipped: 2 })).toBe(true);
    expect(await store.getSchedule(s)).toMatchObject({ next: 660, lastFired: 600, skipped: 2, claim: undefined });
    await eventually(async () => (await dueIds(s, 660)).includes(s), 'advanced: due at its next');
    expect(await store.claimSchedule(s, seen, { by: 'w3', untilS: 700, nowS: 670 })).toBe(false); // it moved on
  });

  it('ends a claim when the spec changes: the old revision is not fired or advanced', async () => {
    const s = id('revise');
    await store.putSchedule({ id: s, owner: 'app:a', spec: spec('1m'), next: 600 });
    expect(await store.claimSchedule(s, { next: 600, revision: 1 }, { by: 'w1', untilS: 630, nowS: 600 })).toBe(true);
    expect(await store.putSchedule({ id: s, owner: 'app:a', spec: spec('5m'), next: 900 })).toBe('updated');
    expect(await store.advanceSchedule(s, { by: 'w1', from: 600, revision: 1 }, { next: 660, lastFired: 600, skipped: 0 })).toBe(false);
    expect(await store.getSchedule(s)).toMatchObject({ revision: 2, next: 900, claim: undefined });
    expect(await store.claimSchedule(s, { next: 900, revision: 1 }, { by: 'w2', untilS: 930, nowS: 900 })).toBe(false);
    expect(await store.claimSchedule(s, { next: 900, revision: 2 }, { by: 'w2', untilS: 930, nowS: 900 })).toBe(true);
  });

  it('advances a schedule paused while it fired, and keeps it out of the due index', async () => {
    const s = id('paused-mid');
    await store.putSchedule({ id: s, owner: 'runtime', spec: spec('1m'), next: 600 });
    await store.claimSchedule(s, { next: 600, revision: 1 }, { by: 'w1', untilS: 630, nowS: 600 });
    await store.pause(s);
    expect(await store.advanceSchedule(s, { by: 'w1', from: 600, revision: 1 }, { next: 660, lastFired: 600, skipped: 0 })).toBe(true);
    expect(await store.getSchedule(s)).toMatchObject({ paused: true, next: 660, lastFired: 600 });
    await eventually(async () => !(await dueIds(s, NEVER_DUE - 1)).includes(s), 'paused: not due');
  });

  it('removes only what its owner holds, and lists every schedule across the shards', async () => {
    const mine = Array.from({ length: 2 * SCHEDULE_SHARDS }, (_, i) => id(`list${i}`));
    for (const s of mine) await store.putSchedule({ id: s, owner: 'app:list', spec: spec('1h'), next: 3_600 });
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listSchedules(cursor);
      listed.push(...page.schedules.map((r) => r.id));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(listed).toEqual(expect.arrayContaining(mine));
    expect(await store.removeSchedule(mine[0]!, 'app:other')).toBe(false);
    expect(await store.removeSchedule(mine[0]!, 'app:list')).toBe(true);
    expect(await store.removeSchedule(mine[0]!)).toBe(false);
    expect(await store.getSchedule(mine[0]!)).toBeUndefined();
  });
});
