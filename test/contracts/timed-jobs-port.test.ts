import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoSchedules } from '../../src/adapters/dynamodb-schedules.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { DynamoTimedJobs } from '../../src/adapters/dynamodb-timed.js';
import { shardOf } from '../../src/ports/schedule-store.js';
import { TIMED_SHARDS, type TimedJob, type TimedJobStore, timedShardOf } from '../../src/ports/timed-jobs.js';
import { MemoryTimedJobs } from '../../src/testing/memory-timed.js';
import { eventually, LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The timed-job store's contract (jobs kept until their time), on DynamoDB Local (a fresh table with
 * the due index, shared with schedules) and in memory: one put per job id, the due index, one claim
 * at a time that lapses, a removal under its claim or by a cancel that never takes a job from under
 * its send. DynamoDB's due reads are eventually consistent: those assertions wait.
 */
const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `timed-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe('created');
});
afterAll(() => client.destroy());

const subjects: [string, TimedJobStore][] = [
  ['DynamoDB (DynamoDB Local)', new DynamoTimedJobs({ client, table, expiresAt: () => 0 })],
  ['in-memory', new MemoryTimedJobs()],
];

const job = (dueS: number, over: Partial<TimedJob> = {}): TimedJob => ({
  jobId: `job-${randomUUID().slice(0, 8)}`,
  jobName: 'send-reminder',
  queueUrl: 'http://127.0.0.1:4566/000000000000/jobs',
  message: {
    body: '{"v":1,"id":"x","job":"send-reminder","args":{}}',
    attributes: {
      'sqsjobs-job': { DataType: 'String', StringValue: 'send-reminder' },
      bin: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 255]) },
    },
  },
  dueMs: dueS * 1000 + 250,
  tracked: true,
  enqueuedAt: '2027-01-01T00:00:00.000Z',
  ...over,
});

describe.each(subjects)('timed-job store contract: %s', (_name, store) => {
  const dueIds = async (j: TimedJob, untilS: number) => (await store.dueTimed(shardOf(j.jobId), untilS, 100)).jobs.map((r) => r.jobId);

  it('keeps a job once per id, with its message as made, and shows it due by its time', async () => {
    const j = job(5_000);
    expect(await store.putTimed(j)).toBe(true);
    expect(await store.putTimed({ ...j, dueMs: 9_000_000 })).toBe(false);
    expect(await store.getTimed(j.jobId)).toEqual({ ...j, claim: undefined });
    await eventually(async () => (await dueIds(j, 5_000)).includes(j.jobId), 'due by its time');
    expect(await dueIds(j, 4_999)).not.toContain(j.jobId);
  });

  it('one claim at a time, lapsing at its time; due again when it lapses', async () => {
    const j = job(6_000);
    await store.putTimed(j);
    expect(await store.claimTimed(j.jobId, { by: 'a', untilS: 6_030, nowS: 6_000, dueByMs: 6_000_250 })).toEqual({
      ...j,
      claim: { by: 'a', untilS: 6_030 },
    });
    expect(await store.claimTimed(j.jobId, { by: 'b', untilS: 6_031, nowS: 6_001, dueByMs: 6_001_000 })).toBeUndefined();
    await eventually(async () => !(await dueIds(j, 6_029)).includes(j.jobId), 'out of the due index while claimed');
    expect(await dueIds(j, 6_030)).toContain(j.jobId);
    expect((await store.claimTimed(j.jobId, { by: 'b', untilS: 6_060, nowS: 6_030, dueByMs: 6_030_000 }))?.claim).toEqual({
      by: 'b',
      untilS: 6_060,
    });
    expect((await store.getTimed(j.jobId))?.claim).toEqual({ by: 'b', untilS: 6_060 });
    expect(await store.claimTimed('no-such-job', { by: 'a', untilS: 1, nowS: 0, dueByMs: 0 })).toBeUndefined();
  });

  it('is claimed only once due by the claim’s dueByMs, to the millisecond (a burst moved later since the read is not)', async () => {
    const j = job(6_500);
    await store.putTimed(j);
    expect(await store.claimTimed(j.jobId, { by: 'a', untilS: 6_530, nowS: 6_400, dueByMs: 6_500_249 })).toBeUndefined();
    expect((await store.getTimed(j.jobId))?.claim).toBeUndefined();
    expect(await store.claimTimed(j.jobId, { by: 'a', untilS: 6_530, nowS: 6_400, dueByMs: 6_500_250 })).toBeDefined();
  });

  it('removed under its claim only; a cancel removes it only while no live claim holds it', async () => {
    const j = job(7_000);
    await store.putTimed(j);
    await store.claimTimed(j.jobId, { by: 'a', untilS: 7_030, nowS: 7_000, dueByMs: 7_000_250 });
    expect(await store.removeTimed(j.jobId, { claim: 'b' })).toBe(false);
    expect(await store.removeTimed(j.jobId, { nowS: 7_010 })).toBe(false); // being sent: not taken from under its send
    expect(await store.removeTimed(j.jobId, { claim: 'a' })).toBe(true);
    expect(await store.getTimed(j.jobId)).toBeUndefined();
    const k = job(8_000);
    await store.putTimed(k);
    expect(await store.removeTimed(k.jobId, { nowS: 100 })).toBe(true); // a cancel long before its time
    expect(await store.removeTimed(k.jobId, { nowS: 100 })).toBe(false);
  });

  it('pages the due jobs of a shard, soonest first', async () => {
    const jobs: TimedJob[] = [];
    for (let n = 0; jobs.length < 5; n++) {
      const j = job(10_000 + n, { jobId: `page-${randomUUID().slice(0, 8)}` });
      if (shardOf(j.jobId) === 3) jobs.push(j);
    }
    for (const j of [...jobs].reverse()) await store.putTimed(j);
    const read = async () => {
      const out: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.dueTimed(3, 10_100, 2, cursor);
        out.push(...page.jobs.map((r) => r.jobId));
        cursor = page.cursor;
      } while (cursor !== undefined);
      return out;
    };
    await eventually(async () => (await read()).filter((id) => id.startsWith('page-')).length === 5, 'all five listed');
    expect((await read()).filter((id) => id.startsWith('page-'))).toEqual(jobs.map((j) => j.jobId));
  });
});

describe('debounced bursts beside kept jobs', () => {
  it('wait in shards of their own family (timedShardOf), unseen by the kept jobs’ reads', async () => {
    for (const store of subjects.map(([, s]) => s)) {
      const j = job(1, { debounced: true });
      await store.putTimed(j);
      const shard = timedShardOf(j);
      expect(shard).toBe(shardOf(j.jobId) + TIMED_SHARDS);
      await eventually(async () => (await store.dueTimed(shard, 1, 100)).jobs.some((r) => r.jobId === j.jobId), 'due in its family');
      expect((await store.dueTimed(shardOf(j.jobId), 1, 100)).jobs.map((r) => r.jobId)).not.toContain(j.jobId);
      expect((await store.getTimed(j.jobId))?.debounced).toBe(true);
    }
  });
});

describe('timed jobs and schedules in one table', () => {
  it('share the due index without showing in each other’s reads', async () => {
    const timed = new DynamoTimedJobs({ client, table, expiresAt: () => 0 });
    const schedules = new DynamoSchedules({ client, table, expiresAt: () => 0 });
    const j = job(1);
    await timed.putTimed(j);
    await eventually(async () => (await timed.dueTimed(shardOf(j.jobId), 1, 100)).jobs.some((r) => r.jobId === j.jobId), 'timed due');
    const due = await schedules.dueSchedules(shardOf(j.jobId), 1, 100);
    expect(due.schedules).toEqual([]);
  });
});
