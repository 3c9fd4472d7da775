import { afterEach, describe, expect, it, vi } from 'vitest';
import { cancelWith } from '../../../src/status/cancel.js';
import { StoredCancels } from '../../../src/status/stored-cancels.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryKeyValues } from '../../../src/testing/memory-key-values.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import type { JobLock } from '../../../src/ports/lock.js';

// Where a worker looks for a cancel the lock let through: the job store, only when the lock may
// have forgotten it. The in-memory lock and store pass their real adapters' contracts; a memcached
// restart is every key gone. The worker's side on real servers: test/integration/run-at.test.ts.

function setup() {
  const kv = new MemoryKeyValues();
  const lock = new MemoryLock(kv);
  const store = new MemoryJobStore();
  const reads: string[] = [];
  const counted = {
    get: (id: string) => {
      reads.push(id);
      return store.get(id);
    },
  };
  const cancels = new StoredCancels(counted, lock);
  const restart = async () => {
    for (const key of ['kept-since/1/0', 'j1', 'parent']) await kv.delete(key);
  };
  const waiting = (jobId: string) => store.transition({ jobId, jobName: 'report', state: 'waiting', attempt: 0, at: new Date() });
  return { kv, lock, store, reads, cancels, restart, waiting, claim: (id: string) => lock.claim(id, 't', 30) };
}

afterEach(() => vi.useRealTimers());

/** The lock's methods StoredCancels calls, bound: a test replaces one to make a server or a write fail. */
const pick = (lock: MemoryLock) => ({
  keptSince: (id: string) => lock.keptSince(id),
  cancel: (id: string, ttl: number) => lock.cancel(id, ttl),
  release: (id: string, token: string) => lock.release(id, token),
});

describe('cancels the job store keeps', () => {
  it('a job sent since the lock began keeping its marks costs no store read; one sent before is read, and a cancel found is put back', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const s = setup();
    await s.lock.keptSince('j1'); // a worker's first claim on this memcached
    await s.waiting('j1');
    await cancelWith({ store: s.store, lock: s.lock }, 'j1');
    vi.setSystemTime(1_010_000);
    expect(
      await s.cancels.cancelled({ token: undefined, jobId: 'j1', parentId: undefined, sentAtMs: 1_005_000, lockUnavailable: false }),
    ).toBe(false);
    expect(s.reads).toEqual([]); // the lock began keeping before the job was sent: its answer stands
    // memcached restarts: its marks are gone, and it begins again later than the job was sent.
    await s.restart();
    vi.setSystemTime(1_020_000);
    expect(await s.claim('j1')).toBe('claimed');
    expect(
      await s.cancels.cancelled({ token: undefined, jobId: 'j1', parentId: undefined, sentAtMs: 1_005_000, lockUnavailable: false }),
    ).toBe(true);
    expect(s.reads).toEqual(['j1']);
    expect(await s.claim('j1')).toBe('cancelled'); // put back over the claim
  });

  it('a child whose fan-out parent was cancelled, and any job while the lock cannot be asked, are read from the store', async () => {
    const s = setup();
    await s.waiting('parent');
    await cancelWith({ store: s.store, lock: s.lock }, 'parent');
    await s.restart();
    expect(await s.cancels.cancelled({ token: undefined, jobId: 'c1', parentId: 'parent', sentAtMs: 0, lockUnavailable: false })).toBe(
      true,
    );
    expect(await s.claim('parent')).toBe('cancelled');
    await s.waiting('j2');
    s.lock.down = true;
    expect(
      await s.cancels.cancelled({ token: undefined, jobId: 'j2', parentId: undefined, sentAtMs: Date.now(), lockUnavailable: true }),
    ).toBe(false);
    expect(s.reads).toContain('j2');
  });

  it("a child is looked up when its parent's server began keeping later than the child was sent, though its own did not", async () => {
    const s = setup();
    await s.waiting('parent');
    await cancelWith({ store: s.store, lock: s.lock }, 'parent');
    // Two servers: the child's kept its data all along, the parent's restarted after the child was sent.
    const since: Record<string, number> = { c1: 0, parent: 2_000 };
    const lock = { ...pick(s.lock), keptSince: async (id: string) => since[id] };
    const cancels = new StoredCancels(s.store, lock as unknown as JobLock);
    expect(await cancels.cancelled({ token: undefined, jobId: 'c1', parentId: 'parent', sentAtMs: 1_000, lockUnavailable: false })).toBe(
      true,
    );
    since.parent = 0;
    expect(await cancels.cancelled({ token: undefined, jobId: 'c1', parentId: 'parent', sentAtMs: 10_000, lockUnavailable: false })).toBe(
      false,
    );
  });

  it('a mark that cannot be put back lets go of the claim the worker made, so a copy does not read it running', async () => {
    const s = setup();
    await s.waiting('j1');
    await cancelWith({ store: s.store, lock: s.lock }, 'j1');
    await s.restart();
    expect(await s.lock.claim('j1', 'mine', 30)).toBe('claimed');
    const lock = { ...pick(s.lock), cancel: async () => false };
    const cancels = new StoredCancels(s.store, lock as unknown as JobLock);
    expect(await cancels.cancelled({ token: 'mine', jobId: 'j1', parentId: undefined, sentAtMs: 0, lockUnavailable: false })).toBe(true);
    expect(await s.lock.holder('j1')).toBeUndefined();
  });

  it('a store that cannot be read lets the job run (at least once stays the floor)', async () => {
    const lock = new MemoryLock();
    const cancels = new StoredCancels({ get: () => Promise.reject(new Error('down')) }, lock);
    expect(await cancels.cancelled({ token: undefined, jobId: 'j1', parentId: undefined, sentAtMs: 0, lockUnavailable: true })).toBe(false);
  });
});
