import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import type { Allowances } from '../../src/ports/allowances.js';
import { MemoryAllowances } from '../../src/testing/memory-allowances.js';
import { freePort } from '../helpers/memcached.js';
import { LOCAL_MEMCACHED } from '../helpers/stack.js';

/**
 * The spillover allowances' contract: what producers rely on. It runs against the in-memory
 * allowances and against memcached's, each asked through two clients as two producers would be,
 * so the fake cannot drift.
 */
const prefix = `allowances-${randomUUID().slice(0, 8)}:`;
const locks = [
  new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix }),
  new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix }),
];
const memory = new MemoryAllowances();
afterAll(() => {
  for (const l of locks) l.close();
});

const subjects: [string, { producers: [Allowances, Allowances]; unreachable: () => Promise<Allowances> }][] = [
  ['in-memory allowances', { producers: [memory, memory], unreachable: async () => Object.assign(new MemoryAllowances(), { down: true }) }],
  [
    "memcached's allowances (MemcachedLock.allowances)",
    {
      producers: [locks[0]!.allowances, locks[1]!.allowances],
      unreachable: async () => {
        const lock = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 });
        locks.push(lock);
        return lock.allowances;
      },
    },
  ],
];

/** burst 5 per window of 5 s (1/s): a window starts at T0. */
const allowance = { perSecond: 1, burst: 5 };
const T0 = Math.floor(Date.now() / 5_000) * 5_000;

describe.each(subjects)('allowances port contract: %s', (_name, s) => {
  it('gives a key `burst` per window across producers, then nothing, and counts each send whole', async () => {
    const key = `acme-${randomUUID()}`;
    expect(await s.producers[0].take(key, 3, allowance, T0)).toBe(3);
    expect(await s.producers[1].take(key, 3, allowance, T0 + 100)).toBe(2); // 2 of 3 within, 1 spills
    expect(await s.producers[0].take(key, 1, allowance, T0 + 4_000)).toBe(0);
    expect(await s.producers[1].take(key, 4, allowance, T0 + 5_000)).toBe(4); // the next window
  });

  it('counts each key apart', async () => {
    const key = `acme-${randomUUID()}`;
    expect(await s.producers[0].take(key, 5, allowance, T0)).toBe(5);
    expect(await s.producers[1].take(`${key}-other`, 5, allowance, T0)).toBe(5);
  });

  it('answers unavailable when the store cannot be asked (the producer then meters on its own)', async () => {
    const down = await s.unreachable();
    expect(await down.take(`acme-${randomUUID()}`, 2, allowance, T0)).toBe('unavailable');
  });
});
