import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { tickRotaOn } from '../../src/fleet/tick-rota.js';
import type { TickRota } from '../../src/ports/tick-rota.js';
import { MemoryKeyValues } from '../../src/testing/memory-key-values.js';
import { freePort } from '../helpers/memcached.js';
import { LOCAL_MEMCACHED } from '../helpers/stack.js';

/**
 * The tick rota's contract, on memcached (three clients, as three workers) and on MemoryKeyValues:
 * each (shard, second) is one asker's, and an unreachable store lets every worker read.
 */
const prefix = `rota-${randomUUID().slice(0, 8)}:`;
const locks = [0, 1, 2].map(() => new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix }));
afterAll(() => {
  for (const l of locks) l.close();
});
const memory = new MemoryKeyValues();

const subjects: [string, { workers: TickRota[]; unreachable: () => Promise<TickRota> }][] = [
  [
    'in memory (MemoryKeyValues)',
    {
      workers: [0, 1, 2].map(() => tickRotaOn(memory, (name) => name)),
      unreachable: async () => tickRotaOn(Object.assign(new MemoryKeyValues(), { down: true }), (name) => name),
    },
  ],
  [
    "memcached's (MemcachedLock.ticks)",
    {
      workers: locks.map((l) => l.ticks),
      unreachable: async () => {
        const lock = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 });
        locks.push(lock);
        return lock.ticks;
      },
    },
  ],
];

describe.each(subjects)('the tick rota: %s', (_name, s) => {
  it('gives each shard of each second to exactly one of the workers with the same jobs asking at once', async () => {
    const second = 1_900_000_000 + Math.floor(Math.random() * 1_000_000);
    for (const shard of [0, 1, 2, 3]) {
      const answers = await Promise.all(s.workers.map((w) => w.mine('jobs-a', shard, second)));
      expect(answers.filter(Boolean)).toHaveLength(1);
      expect(await s.workers[0]!.mine('jobs-a', shard, second)).toBe(false); // asked again: still taken
    }
    expect(await s.workers[1]!.mine('jobs-a', 0, second + 1)).toBe(true); // the next second is a new turn
    // A worker with other jobs (another app, another version) has turns of its own, to fire its own schedules.
    expect(await s.workers[2]!.mine('jobs-b', 0, second)).toBe(true);
  });

  it('answers true when the store cannot be reached: every worker reads (it costs reads, never a second fire)', async () => {
    const down = await s.unreachable();
    expect(await down.mine('jobs-a', 0, 1)).toBe(true);
    expect(await down.mine('jobs-a', 0, 1)).toBe(true);
  });
});
