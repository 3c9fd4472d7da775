import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoEnqueueKeys } from '../../src/adapters/dynamodb-keys.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { DynamoTimedJobs } from '../../src/adapters/dynamodb-timed.js';
import type { EnqueueKeys } from '../../src/ports/enqueue-keys.js';
import type { TimedJob, TimedJobStore } from '../../src/ports/timed-jobs.js';
import { MemoryEnqueueKeys } from '../../src/testing/memory-keys.js';
import { MemoryTimedJobs } from '../../src/testing/memory-timed.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The keys-on-enqueue contract, on DynamoDB Local and in memory: a key is taken only when free
 * (nobody, the same job, the holder named, a window that ended) and a refusal answers the record in
 * force; it is let go only by its holder; a burst is opened with its kept job in one write, only
 * while the key holds the holder named, and extended only while no tick ever claimed its job.
 */
const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `keys-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe('created');
});
afterAll(() => client.destroy());

const subjects: [string, () => { keys: EnqueueKeys; timed: TimedJobStore }][] = [
  [
    'DynamoDB (DynamoDB Local)',
    () => {
      const t = { client, table, expiresAt: () => Math.floor(Date.now() / 1000) + 86_400 };
      const timed = new DynamoTimedJobs(t);
      return { keys: new DynamoEnqueueKeys(t), timed };
    },
  ],
  [
    'in-memory',
    () => {
      const timed = new MemoryTimedJobs();
      return { keys: new MemoryEnqueueKeys(timed), timed };
    },
  ],
];

const burst = (jobId: string, dueMs: number, body = '{"args":1}'): TimedJob => ({
  jobId,
  jobName: 'index-document',
  queueUrl: 'http://127.0.0.1:4566/000000000000/jobs',
  message: { body, attributes: { 'sqsjobs-job': { DataType: 'String', StringValue: 'index-document' } } },
  dueMs,
  tracked: false,
  enqueuedAt: '2027-01-01T00:00:00.000Z',
  debounced: true,
});

describe.each(subjects)('enqueue keys contract: %s', (_name, make) => {
  const { keys, timed } = make();
  const id = () => `singleton#job#${randomUUID().slice(0, 8)}`;

  it('takes a free key once, and a refusal answers the record in force', async () => {
    const k = id();
    expect(await keys.readKey(k)).toBeUndefined();
    expect(await keys.takeKey(k, { jobId: 'a', sinceMs: 1_000 }, { nowMs: 1_000 })).toBeUndefined();
    expect(await keys.takeKey(k, { jobId: 'b', sinceMs: 1_001 }, { nowMs: 1_001 })).toEqual({ jobId: 'a', sinceMs: 1_000 });
    expect(await keys.takeKey(k, { jobId: 'a', sinceMs: 1_002 }, { nowMs: 1_002 })).toBeUndefined(); // the same job again: a retry
    expect(await keys.takeKey(k, { jobId: 'b', sinceMs: 1_003 }, { holder: 'x', nowMs: 1_003 })).toEqual({ jobId: 'a', sinceMs: 1_002 });
    expect(await keys.takeKey(k, { jobId: 'b', sinceMs: 1_004 }, { holder: 'a', nowMs: 1_004 })).toBeUndefined(); // the holder judged done
    expect(await keys.readKey(k)).toEqual({ jobId: 'b', sinceMs: 1_004 });
  });

  it('frees a window when it ends', async () => {
    const k = id();
    expect(await keys.takeKey(k, { jobId: 'a', sinceMs: 0, untilMs: 5_000 }, { nowMs: 0 })).toBeUndefined();
    expect(await keys.takeKey(k, { jobId: 'b', sinceMs: 4_999, untilMs: 9_999 }, { nowMs: 4_999 })).toEqual({
      jobId: 'a',
      sinceMs: 0,
      untilMs: 5_000,
    });
    expect(await keys.takeKey(k, { jobId: 'b', sinceMs: 5_000, untilMs: 10_000 }, { nowMs: 5_000 })).toBeUndefined();
  });

  it('keeps what a holder may wait for (keepUntilMs) with the record', async () => {
    const k = id();
    const record = { jobId: 'a', sinceMs: Date.now(), keepUntilMs: Date.now() + 30 * 86_400_000 };
    expect(await keys.takeKey(k, record, { nowMs: Date.now() })).toBeUndefined();
    expect(await keys.readKey(k)).toEqual(record);
  });

  it('is let go only by its holder', async () => {
    const k = id();
    await keys.takeKey(k, { jobId: 'a', sinceMs: 0 }, { nowMs: 0 });
    await keys.releaseKey(k, 'b');
    expect((await keys.readKey(k))?.jobId).toBe('a');
    await keys.releaseKey(k, 'a');
    expect(await keys.readKey(k)).toBeUndefined();
  });

  it('opens a burst with its kept job together, only while the key holds the holder named (or nobody)', async () => {
    const k = id();
    const first = burst(`b1-${randomUUID().slice(0, 8)}`, 10_000);
    await keys.takeKey(k, { jobId: 'someone', sinceMs: 8_000 }, { nowMs: 8_000 });
    expect(await keys.openBurst(k, { jobId: first.jobId, sinceMs: 9_000 }, first, 'another')).toBe(false);
    expect(await timed.getTimed(first.jobId)).toBeUndefined(); // nothing kept when the key refused
    expect(await keys.openBurst(k, { jobId: first.jobId, sinceMs: 9_000 }, first, 'someone')).toBe(true);
    expect(await keys.readKey(k)).toEqual({ jobId: first.jobId, sinceMs: 9_000 });
    expect(await timed.getTimed(first.jobId)).toEqual({ ...first, claim: undefined });
    const rival = burst(`b2-${randomUUID().slice(0, 8)}`, 10_000);
    expect(await keys.openBurst(k, { jobId: rival.jobId, sinceMs: 9_001 }, rival, 'someone')).toBe(false); // moved on meanwhile
    expect(await keys.openBurst(k, { jobId: rival.jobId, sinceMs: 9_001 }, rival, undefined)).toBe(false);
    expect(await timed.getTimed(rival.jobId)).toBeUndefined();
    const next = burst(`b3-${randomUUID().slice(0, 8)}`, 20_000);
    expect(await keys.openBurst(k, { jobId: next.jobId, sinceMs: 19_000 }, next, first.jobId)).toBe(true);
    expect((await keys.readKey(k))?.jobId).toBe(next.jobId);
  });

  it('opens one burst of two racing for one key: the other keeps nothing; a kept job of the same id refuses it too', async () => {
    const k = id();
    const [a, b] = [burst(`ra-${randomUUID().slice(0, 8)}`, 10_000), burst(`rb-${randomUUID().slice(0, 8)}`, 10_000)];
    const opened = await Promise.all([
      keys.openBurst(k, { jobId: a.jobId, sinceMs: 9_000 }, a, undefined),
      keys.openBurst(k, { jobId: b.jobId, sinceMs: 9_000 }, b, undefined),
    ]);
    expect(opened.filter(Boolean)).toHaveLength(1);
    const [won, lost] = opened[0] ? [a, b] : [b, a];
    expect((await keys.readKey(k))?.jobId).toBe(won.jobId);
    expect(await timed.getTimed(lost.jobId)).toBeUndefined();
    // The key would let it (the holder named), but a job of that id is kept already: nothing changes.
    expect(await keys.openBurst(k, { jobId: won.jobId, sinceMs: 9_500 }, won, won.jobId)).toBe(false);
    expect(await keys.readKey(k)).toEqual({ jobId: won.jobId, sinceMs: 9_000 });
  });

  it('extends a burst’s job (message, queue, due time) only until a tick claims it, never to an earlier time', async () => {
    const k = id();
    const b = burst(`b-${randomUUID().slice(0, 8)}`, 10_000);
    await keys.openBurst(k, { jobId: b.jobId, sinceMs: 9_000 }, { ...b, message: { ...b.message, groupId: 'acme' } }, undefined);
    const later = { ...b.message, body: '{"args":2}' };
    const queueUrl = 'http://127.0.0.1:4566/000000000000/jobs-acme';
    expect(await keys.extendBurst(b.jobId, { message: later, queueUrl, dueMs: 12_500 })).toBe('extended');
    // The last enqueue's message as it is: its group gone with it.
    expect(await timed.getTimed(b.jobId)).toMatchObject({ message: later, queueUrl, dueMs: 12_500 });
    expect((await timed.getTimed(b.jobId))?.message.groupId).toBeUndefined();
    // An enqueue that computed an earlier time, landing after a later one: refused, the burst kept as it was.
    expect(await keys.extendBurst(b.jobId, { message: { ...b.message, body: '{"args":1}' }, queueUrl, dueMs: 12_000 })).toBe('later');
    expect((await timed.getTimed(b.jobId))?.message).toEqual(later);
    expect(await timed.claimTimed(b.jobId, { by: 't', untilS: 40, nowS: 10, dueByMs: 12_499 })).toBeUndefined(); // moved later: not due
    expect((await timed.claimTimed(b.jobId, { by: 't', untilS: 42, nowS: 12, dueByMs: 12_500 }))?.message).toEqual(later);
    const third = { message: { ...b.message, body: '{"args":3}' }, queueUrl, dueMs: 15_000 };
    expect(await keys.extendBurst(b.jobId, third)).toBe('closed');
    // Its claim lapsed (its tick died after the send): still not extended, so the same message is sent again.
    expect(await keys.extendBurst(b.jobId, { ...third, dueMs: 99_000 })).toBe('closed');
    expect((await timed.getTimed(b.jobId))?.message).toEqual(later);
    expect(await keys.extendBurst('no-such-burst', { message: later, queueUrl, dueMs: 1 })).toBe('closed');
  });
});
