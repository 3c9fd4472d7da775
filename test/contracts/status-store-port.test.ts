import { describe, expect, it } from 'vitest';
import { type JobState, MAX_ERROR_CHARS, MAX_JSON_BYTES } from '../../src/ports/status-store.js';
import { jobStoreSubjects, newJobId as id } from '../helpers/job-stores.js';

/**
 * The status store's contract: state changes ordered by (attempt, rank) and idempotent, progress
 * that never goes down, and what a read shows. It runs against DynamoDB's store and the in-memory
 * one, so the fake cannot drift from what DynamoDB's conditions decide.
 */
const at = new Date('2026-11-22T10:00:00Z');

describe.each(jobStoreSubjects())('status store contract: %s', (_name, store) => {
  const move = (jobId: string, state: JobState, attempt: number, extra: object = {}) =>
    store.transition({ jobId, jobName: 'import', state, attempt, at, ...extra });

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
      startedAt: at.toISOString(),
      finishedAt: at.toISOString(),
      updatedAt: at.toISOString(),
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
    expect(await move(jobId, 'completed', 3)).toBe('stale');
    expect((await store.get(jobId))?.state).toBe('completed');
  });

  it('lets a completion win over failed (a job replayed from the DLQ that then succeeds)', async () => {
    const jobId = id();
    await move(jobId, 'failed', 5, { reason: 'retries-exhausted', error: 'boom' });
    expect(await move(jobId, 'running', 1)).toBe('stale');
    expect(await move(jobId, 'completed', 1)).toBe('applied');
    expect(await store.get(jobId)).toMatchObject({ state: 'completed', attempt: 1, reason: 'retries-exhausted' });
  });

  it('keeps the first enqueuedAt and parent, a short run’s start, and only small results; cuts long errors', async () => {
    const jobId = id();
    await move(jobId, 'waiting', 0, { enqueuedAt: '2026-11-22T09:00:00.000Z', parentId: 'p1' });
    await move(jobId, 'retrying', 1, {
      enqueuedAt: '2026-11-22T09:30:00.000Z',
      parentId: 'p2',
      startedAt: new Date('2026-11-22T09:59:59Z'),
      error: 'x'.repeat(MAX_ERROR_CHARS + 50),
    });
    await move(jobId, 'completed', 2, { result: 'y'.repeat(MAX_JSON_BYTES) }); // too big once quoted as JSON
    const status = await store.get(jobId);
    expect(status).toMatchObject({ enqueuedAt: '2026-11-22T09:00:00.000Z', parentId: 'p1', startedAt: '2026-11-22T09:59:59.000Z' });
    expect(status?.error).toHaveLength(MAX_ERROR_CHARS);
    expect(status?.result).toBeUndefined();
  });

  it('sets and adds progress, never goes down, and stops at completed', async () => {
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

  it('takes data on its own, and drops data too big to keep', async () => {
    const jobId = id();
    await move(jobId, 'running', 1);
    await store.progress(jobId, { data: { step: 'parse' } });
    expect((await store.get(jobId))?.data).toEqual({ step: 'parse' });
    await store.progress(jobId, { data: 'z'.repeat(MAX_JSON_BYTES) });
    expect((await store.get(jobId))?.data).toEqual({ step: 'parse' });
  });

  it('writes nothing for a job it has no record of', async () => {
    const jobId = id();
    await store.progress(jobId, { done: 1 });
    expect(await store.get(jobId)).toBeUndefined();
  });
});
