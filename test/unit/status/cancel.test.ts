import { describe, expect, it } from 'vitest';
import type { JobState, Transition } from '../../../src/ports/status-store.js';
import { cancelWith } from '../../../src/status/cancel.js';
import { JobCanceller } from '../../../src/status/cancel-job.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';

// What a cancel decides from the job's record, on the in-memory store and lock (each passes the
// same contract as its real adapter); the worker's side runs against LocalStack, memcached and
// DynamoDB Local in test/integration/cancel.test.ts.

function setup() {
  const store = new MemoryJobStore();
  const lock = new MemoryLock();
  const record = (jobId: string, state: JobState, attempt = 1, extra: Partial<Transition> = {}) =>
    store.transition({ jobId, jobName: 'report', state, attempt, at: new Date(), ...extra });
  /** What a worker's claim of the job reads now. */
  const claim = (jobId: string) => lock.claim(jobId, 'w', 30, { messageId: 'm-1', receiveCount: 1 });
  return { store, lock, record, claim, cancel: (jobId: string) => cancelWith({ store, lock }, jobId) };
}

describe('cancelWith', () => {
  it.each(['waiting', 'retrying'] as const)('%s: recorded cancelled, and a worker that receives it reads cancelled', async (state) => {
    const s = setup();
    await s.record('j1', state);
    const result = await s.cancel('j1');
    expect(result).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled', reason: 'cancelled by request', attempt: 1 } });
    expect(await s.claim('j1')).toBe('cancelled');
  });

  it("running: recorded cancelled, and its worker's next lock extension reads cancelled", async () => {
    const s = setup();
    await s.lock.claim('j1', 'holder', 30, { messageId: 'm-1', receiveCount: 1 });
    await s.record('j1', 'running', 2);
    expect(await s.cancel('j1')).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled', attempt: 2 } });
    expect(await s.lock.extend('j1', 'holder', 30)).toBe('cancelled');
  });

  it('a job that completes anyway reads completed: the truth wins over the cancel', async () => {
    const s = setup();
    await s.record('j1', 'running');
    await s.cancel('j1');
    await s.record('j1', 'completed');
    expect((await s.store.get('j1'))?.state).toBe('completed');
  });

  it.each(['completed', 'failed'] as const)('%s already: nothing changes, and the lock is left as it was', async (state) => {
    const s = setup();
    await s.record('j1', state);
    expect(await s.cancel('j1')).toMatchObject({ outcome: 'ended', status: { state } });
    expect(await s.claim('j1')).toBe('claimed');
  });

  it('cancelled already: answers cancelled again (a retried DELETE is not an error)', async () => {
    const s = setup();
    await s.record('j1', 'waiting');
    await s.cancel('j1');
    expect(await s.cancel('j1')).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled' } });
  });

  it('no record: not found, and nothing is marked', async () => {
    const s = setup();
    expect(await s.cancel('nope')).toEqual({ outcome: 'not-found', jobId: 'nope' });
    expect(await s.claim('nope')).toBe('claimed');
  });

  it('a fan-out parent waiting for its children: its record stays, its children not yet run read cancelled', async () => {
    const s = setup();
    await s.store.openFanOut('p1', 'split', 3, undefined);
    await s.record('p1', 'completed');
    expect(await s.cancel('p1')).toMatchObject({ outcome: 'cancelled', status: { state: 'waiting-children' } });
    expect(await s.lock.claim('p1.c0', 'w', 30, { messageId: 'm-2', receiveCount: 1, parentId: 'p1' })).toBe('cancelled');
  });

  it('memcached refuses the mark: LOCK_UNREACHABLE, and the record is unchanged (nothing was cancelled)', async () => {
    const s = setup();
    await s.record('j1', 'waiting');
    s.lock.down = true;
    await expect(s.cancel('j1')).rejects.toMatchObject({ code: 'LOCK_UNREACHABLE' });
    expect((await s.store.get('j1'))?.state).toBe('waiting');
  });

  it('the store cannot be read: STORE_UNREACHABLE', async () => {
    const s = setup();
    s.store.down = true;
    await expect(s.cancel('j1')).rejects.toMatchObject({ code: 'STORE_UNREACHABLE' });
  });

  it('a later attempt recorded between the read and the write: cancelled at that attempt', async () => {
    const s = setup();
    await s.record('j1', 'retrying', 1);
    const get = s.store.get.bind(s.store);
    let reads = 0;
    s.store.get = async (id) => {
      const status = await get(id);
      if (++reads === 1) await s.record('j1', 'running', 2); // the worker starts attempt 2 just after the cancel's read
      return status;
    };
    expect(await s.cancel('j1')).toMatchObject({ outcome: 'cancelled', status: { state: 'cancelled', attempt: 2 } });
  });
});

describe('JobCanceller', () => {
  it('names what is missing: the job store, then the memcached workers read', () => {
    expect(() => new JobCanceller({}, {})).toThrow(/cancel needs the job store: pass store \({ table }\) or set SQS_JOBS_JOB_TABLE/);
    expect(() => new JobCanceller({ store: new MemoryJobStore() }, {})).toThrow(/cancel needs the memcached the workers use/);
    expect(() => new JobCanceller({ store: new MemoryJobStore(), lock: new MemoryLock(), memcached: '127.0.0.1:11211' }, {})).toThrow(
      /give either lock or memcached, not both/,
    );
  });

  it('refuses a malformed job id, naming the field', async () => {
    const c = new JobCanceller({ store: new MemoryJobStore(), lock: new MemoryLock() }, {});
    await expect(c.cancel('has space')).rejects.toThrow(/jobId/);
  });
});
