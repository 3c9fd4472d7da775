import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import type { Permits } from '../../src/ports/permits.js';
import { MemoryPermits } from '../../src/testing/memory-permits.js';
import { freePort } from '../helpers/memcached.js';
import { LOCAL_MEMCACHED, sleep } from '../helpers/stack.js';

/**
 * The permits' contract (tenant caps, exclusive batch keys): what the worker relies on. It runs
 * against the in-memory permits and against memcached's, so the fake cannot drift.
 */
const memcached = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: `permits-${randomUUID().slice(0, 8)}:` });
const unreachable: MemcachedLock[] = [];
afterAll(() => {
  memcached.close();
  for (const l of unreachable) l.close();
});

const subjects: [string, { permits: Permits; unreachable: () => Promise<Permits> }][] = [
  ['in-memory permits', { permits: new MemoryPermits(), unreachable: async () => Object.assign(new MemoryPermits(), { down: true }) }],
  [
    "memcached's permits (MemcachedLock.permits)",
    {
      permits: memcached.permits,
      unreachable: async () => {
        const lock = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 });
        unreachable.push(lock);
        return lock.permits;
      },
    },
  ],
];

describe.each(subjects)('permits port contract: %s', (_name, s) => {
  it('gives at most `cap` permits of a key at once, each index once, then answers full', async () => {
    const key = `tenant-${randomUUID()}`;
    const taken = await Promise.all(['a', 'b', 'c'].map((t) => s.permits.take(key, 3, t, 30)));
    expect([...taken].sort()).toEqual([0, 1, 2]);
    expect(await s.permits.take(key, 3, 'd', 30)).toBe('full');
    // Another key is counted apart.
    expect(await s.permits.take(`${key}-other`, 1, 'e', 30)).toBe(0);
  });

  it('frees a permit on release by its holder only', async () => {
    const key = `tenant-${randomUUID()}`;
    const index = await s.permits.take(key, 1, 'a', 30);
    expect(index).toBe(0);
    await s.permits.release(key, 0, 'not-the-holder');
    expect(await s.permits.take(key, 1, 'b', 30)).toBe('full');
    await s.permits.release(key, 0, 'a');
    expect(await s.permits.take(key, 1, 'b', 30)).toBe(0);
  });

  it("lets a permit expire at its TTL unless its holder extends it (a dead worker's permit comes back)", async () => {
    const key = `tenant-${randomUUID()}`;
    // memcached counts TTLs in whole seconds of its own clock: a TTL of 3 s ends 2-3 s after the
    // take (a TTL of 2 s could end just over 1 s after it, before a loaded machine extends it).
    expect(await s.permits.take(key, 1, 'kept', 3)).toBe(0);
    expect(await s.permits.take(`${key}-lapsed`, 1, 'dead', 3)).toBe(0);
    await s.permits.extend(key, 0, 'kept', 10);
    await s.permits.extend(`${key}-lapsed`, 0, 'not-the-holder', 10); // extends nothing
    await sleep(4_200);
    expect(await s.permits.take(key, 1, 'x', 30)).toBe('full');
    expect(await s.permits.take(`${key}-lapsed`, 1, 'x', 30)).toBe(0);
  });

  it('answers unavailable, never full or a permit, when the store cannot be asked (caps degrade to none)', async () => {
    const down = await s.unreachable();
    expect(await down.take(`tenant-${randomUUID()}`, 2, 'a', 30)).toBe('unavailable');
    await expect(down.extend('k', 0, 'a', 30)).resolves.toBeUndefined();
    await expect(down.release('k', 0, 'a')).resolves.toBeUndefined();
  });
});
