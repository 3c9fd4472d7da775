import { randomUUID } from 'node:crypto';
import { DescribeTimeToLiveCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import type { JobState } from '../../src/ports/job-store.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `jobs-${randomUUID().slice(0, 8)}`;
const store = new DynamoJobStore({ client, table, ttlSeconds: 3_600 });
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe(true);
  expect(await createJobTable(client, table)).toBe(false); // idempotent
});
afterAll(() => client.destroy());

const done = { job: 'import-done', queueUrl: 'http://127.0.0.1:4566/000000000000/jobs', args: { source: 's3://b/k' } };
const id = () => `job-${randomUUID().slice(0, 8)}`;
const at = new Date('2026-11-22T10:00:00Z');
const move = (jobId: string, state: JobState, attempt: number, extra: object = {}) =>
  store.transition({ jobId, jobName: 'import', state, attempt, at, ...extra });

describe('DynamoJobStore: state changes are ordered and idempotent', () => {
  it('walks waiting → running → retrying → running → completed, with what each state says', async () => {
    const jobId = id();
    expect(await move(jobId, 'waiting', 0, { enqueuedAt: '2026-11-22T09:59:00.000Z' })).toBe('applied');
    expect((await store.get(jobId))?.state).toBe('waiting');
    expect(await move(jobId, 'running', 1, { worker: 'w1' })).toBe('applied');
    expect(await move(jobId, 'retrying', 1, { error: 'boom', nextAttemptAt: new Date('2026-11-22T10:00:05Z') })).toBe('applied');
    const retrying = await store.get(jobId);
    expect(retrying).toMatchObject({ state: 'retrying', attempt: 1, error: 'boom', nextAttemptAt: '2026-11-22T10:00:05.000Z' });
    expect(await move(jobId, 'running', 2, { worker: 'w2' })).toBe('applied');
    expect(await move(jobId, 'completed', 2, { result: { rows: 3 } })).toBe('applied');
    expect(await store.get(jobId)).toMatchObject({
      jobId,
      jobName: 'import',
      state: 'completed',
      attempt: 2,
      worker: 'w2',
      result: { rows: 3 },
      enqueuedAt: '2026-11-22T09:59:00.000Z',
      finishedAt: at.toISOString(),
    });
  });

  it('refuses late and duplicate writes: never backwards, completed stays completed', async () => {
    const jobId = id();
    await move(jobId, 'running', 2);
    expect(await move(jobId, 'running', 2)).toBe('stale'); // a duplicate
    expect(await move(jobId, 'running', 1)).toBe('stale'); // a lost lease's late write
    expect(await move(jobId, 'waiting', 0)).toBe('stale'); // the producer's write landing last
    await move(jobId, 'completed', 2);
    expect(await move(jobId, 'running', 3)).toBe('stale'); // a redelivery after success
    expect(await move(jobId, 'failed', 3, { reason: 'retries-exhausted' })).toBe('stale');
    expect((await store.get(jobId))?.state).toBe('completed');
  });

  it('lets a completion win over failed (a job replayed from the DLQ that then succeeds)', async () => {
    const jobId = id();
    await move(jobId, 'failed', 5, { reason: 'retries-exhausted', error: 'boom' });
    expect(await move(jobId, 'running', 1)).toBe('stale');
    expect(await move(jobId, 'completed', 1)).toBe('applied');
  });
});

describe('DynamoJobStore: progress', () => {
  it('sets and adds, never goes down, and stops at completed', async () => {
    const jobId = id();
    await move(jobId, 'running', 1);
    await store.progress(jobId, { done: 10, total: 100, data: { file: 'a.csv' } });
    await Promise.all(Array.from({ length: 20 }, () => store.progress(jobId, { add: 2 }))); // many workers at once
    expect((await store.get(jobId))?.progress).toEqual({ done: 50, total: 100 });
    await store.progress(jobId, { done: 30 }); // behind what is stored: ignored
    expect((await store.get(jobId))?.progress?.done).toBe(50);
    expect((await store.get(jobId))?.data).toEqual({ file: 'a.csv' });
    await move(jobId, 'completed', 1);
    await store.progress(jobId, { done: 60 });
    expect((await store.get(jobId))?.progress?.done).toBe(50);
  });

  it('takes data on its own', async () => {
    const jobId = id();
    await move(jobId, 'running', 1);
    await store.progress(jobId, { data: { step: 'parse' } });
    expect((await store.get(jobId))?.data).toEqual({ step: 'parse' });
  });

  it('writes nothing for a job it has no record of', async () => {
    const jobId = id();
    await store.progress(jobId, { done: 1 });
    expect(await store.get(jobId)).toBeUndefined();
  });
});

describe('DynamoJobStore: fan-out counters', () => {
  it('counts each child once, and exactly one caller is told to send the completion', async () => {
    const parentId = id();
    expect(await store.openFanOut(parentId, 'import', 3, done)).toEqual({
      total: 3,
      sent: 0,
      succeeded: 0,
      failed: 0,
      completionSent: false,
    });
    await store.fanOutSent(parentId, 3);
    await store.fanOutSent(parentId, 1); // never backwards
    const end = async (childId: string, succeeded = true) => {
      const count = await store.childEnded({ parentId, childId, succeeded }, childId, 60_000);
      if (count.kind === 'no-fan-out') throw new Error('the fan-out is there');
      return { status: count.status, completion: count.kind === 'counted' ? count.completion : undefined, kind: count.kind };
    };
    expect((await end('c1')).completion).toBeUndefined();
    expect((await end('c1')).status.succeeded).toBe(1); // a redelivered child counts once
    const last = await Promise.all([end('c2', false), end('c3'), end('c3'), end('c2', false)]);
    const claimers = last.filter((r) => r.completion !== undefined);
    expect(claimers.length).toBeGreaterThanOrEqual(1); // one claimer: c2 or c3 (both copies of it may re-claim)
    expect(claimers[0]?.completion).toEqual(done); // what to send, as opened
    expect((await store.get(parentId))?.fanOut).toEqual({ total: 3, sent: 3, succeeded: 2, failed: 1, completionSent: false });
    // Whichever child did not claim it must come back later rather than be deleted.
    const other = claimers[0] === last[0] || claimers[0] === last[3] ? 'c3' : 'c2';
    expect((await end(other, other === 'c3')).kind).toBe('completion-pending');
    await store.completionSent(parentId);
    expect(await end('c3')).toMatchObject({ kind: 'counted', completion: undefined });
    expect((await store.get(parentId))?.fanOut?.completionSent).toBe(true);
  });

  it('a claimer coming back re-claims at once; another waits, and takes over a claim older than the window', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 2, done);
    const end = (childId: string, reclaimAfterMs = 60_000) =>
      store.childEnded({ parentId, childId, succeeded: true }, childId, reclaimAfterMs);
    await end('a');
    expect(await end('b')).toMatchObject({ kind: 'counted', completion: done });
    // b's send failed: b comes back and claims again at once; a copy of a must wait…
    expect(await end('b')).toMatchObject({ kind: 'counted', completion: done });
    expect(await end('a')).toMatchObject({ kind: 'completion-pending' });
    // …until b's claim is older than the window (b died).
    expect(await end('a', 0)).toMatchObject({ kind: 'counted', completion: done });
  });

  it('an untracked parent reads waiting-children until its children have ended, then completed', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 1, done);
    expect((await store.get(parentId))?.state).toBe('waiting-children');
    await store.childEnded({ parentId, childId: 'only', succeeded: true }, 'only', 60_000);
    expect((await store.get(parentId))?.state).toBe('completed');
  });

  it('a child whose parent has no fan-out record is answered as such, and creates nothing', async () => {
    const parentId = id();
    expect(await store.childEnded({ parentId, childId: 'x', succeeded: true }, 'x', 60_000)).toEqual({ kind: 'no-fan-out' });
    expect(await store.get(parentId)).toBeUndefined();
  });

  it('a fan-out of no children claims its completion once', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 0, done);
    expect(await store.claimEmptyCompletion(parentId, 'a', 60_000)).toEqual(done);
    expect(await store.claimEmptyCompletion(parentId, 'b', 60_000)).toBeUndefined();
  });

  it('is resumable: opening again answers the cursor; a different total is refused', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 100, undefined);
    await store.fanOutSent(parentId, 40);
    expect((await store.openFanOut(parentId, 'import', 100, undefined)).sent).toBe(40);
    await expect(store.openFanOut(parentId, 'import', 99, undefined)).rejects.toThrow(/opened with 100 children/);
  });

  it('sets the TTL attribute on records and child markers', async () => {
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    const parentId = id();
    await store.openFanOut(parentId, 'import', 1, done);
    await store.childEnded({ parentId, childId: 'c', succeeded: true }, 't', 60_000);
    const now = Date.now() / 1000;
    for (const pk of [`job#${parentId}`, `child#${parentId}#c`]) {
      const item = await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } } }));
      const expires = Number(item.Item?.expiresAt?.N);
      expect(expires).toBeGreaterThan(now + 3_500);
      expect(expires).toBeLessThan(now + 3_700);
    }
  });
});
