import { describe, expect, it } from 'vitest';
import { jobStoreSubjects, newJobId as id } from '../helpers/job-stores.js';
import { sleep } from '../helpers/stack.js';

/**
 * The fan-out store's contract: each child counted once, one claimer of the completion at a time,
 * a resumable cursor, and what a parent's status reads while its children run. It runs against
 * DynamoDB's store and the in-memory one.
 */
const done = { job: 'import-done', queueUrl: 'http://127.0.0.1:4566/000000000000/jobs', args: { source: 's3://b/k' } };

describe.each(jobStoreSubjects())('fan-out store contract: %s', (_name, store) => {
  it('counts each child once, and tells a caller whose end completed the set to send the completion', async () => {
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
    expect((await end('c1')).status?.succeeded).toBe(1); // a redelivered child counts once
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
    await sleep(5);
    expect(await end('a', 0)).toMatchObject({ kind: 'counted', completion: done });
  });

  it('a fan-out without a completion job answers an empty spec to its claimer (nothing to send)', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 1, undefined);
    expect(await store.childEnded({ parentId, childId: 'only', succeeded: false }, 'only', 60_000)).toMatchObject({
      kind: 'counted',
      completion: { job: '', queueUrl: '' },
    });
  });

  it('an untracked parent reads waiting-children with its children’s progress until they have ended, then completed', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 2, done);
    expect(await store.get(parentId)).toMatchObject({ state: 'waiting-children', progress: { done: 0, total: 2 } });
    await store.childEnded({ parentId, childId: 'a', succeeded: true }, 'a', 60_000);
    expect(await store.get(parentId)).toMatchObject({ state: 'waiting-children', progress: { done: 1, total: 2 } });
    await store.childEnded({ parentId, childId: 'b', succeeded: false }, 'b', 60_000);
    expect(await store.get(parentId)).toMatchObject({ state: 'completed', progress: { done: 2, total: 2 } });
  });

  it('a tracked parent that completed its own run waits for its children; one that failed reads failed', async () => {
    const parentId = id();
    const failedId = id();
    for (const jobId of [parentId, failedId]) {
      await store.transition({ jobId, jobName: 'import', state: 'running', attempt: 1, at: new Date() });
      await store.openFanOut(jobId, 'import', 1, undefined);
    }
    await store.transition({ jobId: parentId, jobName: 'import', state: 'completed', attempt: 1, at: new Date() });
    await store.transition({ jobId: failedId, jobName: 'import', state: 'failed', attempt: 1, at: new Date(), reason: 'unrecoverable' });
    expect((await store.get(parentId))?.state).toBe('waiting-children');
    expect((await store.get(failedId))?.state).toBe('failed');
    await store.childEnded({ parentId, childId: 'c', succeeded: true }, 'c', 60_000);
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
    await store.completionSent(parentId);
    expect(await store.claimEmptyCompletion(parentId, 'a', 60_000)).toBeUndefined();
  });

  it('keeps the completion as JSON, set by the first open that gives one', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 1, undefined);
    const spec = { job: 'import-done', queueUrl: done.queueUrl, args: { at: new Date('2026-11-24T00:00:00Z'), skip: undefined } };
    await store.openFanOut(parentId, 'import', 1, spec as never);
    await store.openFanOut(parentId, 'import', 1, { ...done, job: 'another' });
    spec.args.at = new Date(0); // the caller's object changing later changes nothing stored
    expect(await store.childEnded({ parentId, childId: 'c', succeeded: true }, 'c', 60_000)).toMatchObject({
      kind: 'counted',
      completion: { job: 'import-done', args: { at: '2026-11-24T00:00:00.000Z' } },
    });
  });

  it('marks a completion sent only on a fan-out it has a record of', async () => {
    const parentId = id();
    await store.completionSent(parentId);
    expect(await store.get(parentId)).toBeUndefined();
  });

  it('is resumable: opening again answers the cursor; a different total is refused', async () => {
    const parentId = id();
    await store.openFanOut(parentId, 'import', 100, undefined);
    await store.fanOutSent(parentId, 40);
    expect((await store.openFanOut(parentId, 'import', 100, undefined)).sent).toBe(40);
    await expect(store.openFanOut(parentId, 'import', 99, undefined)).rejects.toThrow(/opened with 100 children/);
  });
});
