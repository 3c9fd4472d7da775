import { afterEach, describe, expect, it } from 'vitest';
import type { JobInfo } from '../../../src/core/job-events.js';
import { StatusTracker, type Tracking } from '../../../src/status/tracker.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';

/*
 * The worker's side of job status, on the in-memory job store (which answers as DynamoDB's does:
 * test/contracts/status-store-port.test.ts). Real timers, short intervals.
 */
const info = (jobId: string, attempt = 1): JobInfo => ({
  jobId,
  jobName: 'import',
  messageId: `m-${jobId}-${attempt}`,
  queueUrl: 'http://memory.invalid/000000000000/jobs',
  attempt,
  tenant: undefined,
});
const tracked: Tracking = { tracked: true, parentId: undefined, enqueuedAt: '2026-11-24T00:00:00.000Z', originId: 'm' };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

let store: MemoryJobStore;
let errors: string[];
let tracker: StatusTracker;
function setup(runningAfterMs = 50) {
  store = new MemoryJobStore();
  errors = [];
  tracker = new StatusTracker({
    store,
    worker: 'host:1',
    progressIntervalMs: 20,
    runningAfterMs,
    onError: (where) => void errors.push(where),
  });
}
afterEach(() => tracker.flush());

describe('StatusTracker', () => {
  it('a run shorter than runningAfterMs writes only its end, with when it started', async () => {
    setup(1_000);
    tracker.running(info('short'), tracked);
    await tracker.ended(info('short'), tracked, { kind: 'succeeded', result: { rows: 2 } }, undefined);
    await tracker.flush();
    expect(await store.get('short')).toMatchObject({ state: 'completed', attempt: 1, worker: 'host:1', result: { rows: 2 } });
    expect((await store.get('short'))?.startedAt).toBeDefined();
    expect((await store.get('short'))?.enqueuedAt).toBe('2026-11-24T00:00:00.000Z');
  });

  it('writes running once the run is long enough, and progress writes it first', async () => {
    setup(50);
    tracker.running(info('long'), tracked);
    await pause(120);
    expect((await store.get('long'))?.state).toBe('running');
    tracker.running(info('quick'), tracked);
    const progress = tracker.progress(info('quick'), tracked);
    progress.fn(3, 10);
    await progress.flush();
    expect(await store.get('quick')).toMatchObject({ state: 'running', progress: { done: 3, total: 10 } });
  });

  it("a late progress call from an earlier run of the message (a FIFO job retried here) does not take the next run's running write", async () => {
    setup(1_000);
    const first = { ...info('fifo', 1), messageId: 'm-fifo' };
    const second = { ...info('fifo', 2), messageId: 'm-fifo' };
    tracker.running(first, tracked);
    await tracker.ended(first, tracked, { kind: 'retry', error: new Error('boom'), delayMs: 0 }, undefined);
    await tracker.flush();
    tracker.running(second, tracked);
    const late = tracker.progress(first, tracked); // the first run's handler, still going
    late.fn(1, 10);
    await late.flush();
    const own = tracker.progress(second, tracked);
    own.fn(2, 10);
    await own.flush();
    expect(await store.get('fifo')).toMatchObject({ state: 'running', attempt: 2 });
  });

  it('records a retry with its error and when it runs next, then a dead letter with its reason', async () => {
    setup();
    const before = Date.now();
    await tracker.ended(info('r', 1), tracked, { kind: 'retry', error: new TypeError('boom'), delayMs: 5_000 }, undefined);
    await tracker.flush();
    const retrying = await store.get('r');
    expect(retrying).toMatchObject({ state: 'retrying', error: 'TypeError: boom' });
    expect(Date.parse(retrying!.nextAttemptAt!)).toBeGreaterThanOrEqual(before + 5_000);
    await tracker.ended(info('r', 2), tracked, { kind: 'dead-letter', reason: 'retries-exhausted', detail: 'boom again' }, undefined);
    await tracker.flush();
    expect(await store.get('r')).toMatchObject({ state: 'failed', attempt: 2, reason: 'retries-exhausted', error: 'boom again' });
  });

  it('writes nothing for an untracked message (a fan-out child only counts in its parent)', async () => {
    setup();
    await tracker.ended(info('child'), { ...tracked, tracked: false, parentId: 'p' }, { kind: 'succeeded' }, undefined);
    await tracker.flush();
    expect(await store.get('child')).toBeUndefined();
  });

  it('never throws when the store fails: the failure is reported, and the job goes on', async () => {
    setup();
    store.down = true;
    await expect(tracker.ended(info('x'), tracked, { kind: 'succeeded' }, undefined)).resolves.toBeUndefined();
    await tracker.flush();
    expect(errors).toEqual(['job status']);
  });
});
