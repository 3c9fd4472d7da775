import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { type DrainMeter, heldPeriodOf } from '../../src/ports/drain-meter.js';
import { MemoryDrainMeter } from '../../src/testing/memory-drain-meter.js';
import { freePort } from '../helpers/memcached.js';
import { LOCAL_MEMCACHED } from '../helpers/stack.js';

/**
 * The drain meter's contract (what admission reads the drain rate from): against the in-memory
 * meter and memcached's, so the fake cannot drift.
 */
const prefix = `drains-${randomUUID().slice(0, 8)}:`;
const memcached = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix });
const other = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix });
const unreachable: MemcachedLock[] = [];
afterAll(() => {
  memcached.close();
  other.close();
  for (const l of unreachable) l.close();
});

interface Subject {
  readonly meter: DrainMeter;
  /** Another process's view of the same counts (a producer beside the workers). */
  readonly peer: DrainMeter;
  unreachable(): Promise<DrainMeter>;
}

const memory = new MemoryDrainMeter();
const subjects: [string, Subject][] = [
  [
    'in-memory drain meter',
    { meter: memory, peer: memory, unreachable: async () => Object.assign(new MemoryDrainMeter(), { down: true }) },
  ],
  [
    "memcached's drain meter (MemcachedLock.drains)",
    {
      meter: memcached.drains,
      peer: other.drains,
      unreachable: async () => {
        const lock = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 });
        unreachable.push(lock);
        return lock.drains;
      },
    },
  ],
];

describe.each(subjects)('drain meter port contract: %s', (_name, s) => {
  const url = () => `http://127.0.0.1:4566/000000000000/q-${randomUUID().slice(0, 8)}`;

  it('reads nothing before the first add, then the sum of every add, from another client too', async () => {
    const q = url();
    expect(await s.peer.read(q)).toBeUndefined();
    await s.meter.add(q, 7);
    await Promise.all([s.meter.add(q, 10), s.peer.add(q, 3), s.meter.add(q, 1)]);
    expect(await s.peer.read(q)).toBe(21);
    expect(await s.meter.read(url())).toBeUndefined(); // each queue its own count
  });

  it('ignores adds that are not a positive whole number', async () => {
    const q = url();
    await s.meter.add(q, 2);
    for (const bad of [0, -5, 1.5, Number.NaN]) await s.meter.add(q, bad);
    expect(await s.meter.read(q)).toBe(2);
  });

  it('held: each period its own sum of every add, from another client too; nothing added reads undefined', async () => {
    const q = url();
    const period = heldPeriodOf(Date.now());
    expect(await s.peer.readHeld(q, period)).toBeUndefined();
    await Promise.all([s.meter.addHeld(q, period, 10), s.peer.addHeld(q, period, 4), s.meter.addHeld(q, period + 1, 2)]);
    for (const bad of [0, -1, 2.5]) await s.meter.addHeld(q, period, bad);
    expect(await s.peer.readHeld(q, period)).toBe(14);
    expect(await s.peer.readHeld(q, period + 1)).toBe(2);
    expect(await s.peer.read(q)).toBeUndefined(); // held is not drained
  });

  it('kept capacity: the last kept wins, read by another client too; none kept, or not a rate, reads undefined', async () => {
    const q = url();
    expect(await s.peer.keptCapacity(q)).toBeUndefined();
    await s.meter.keepCapacity(q, { perSecond: 16.5, at: 1_000 });
    await s.peer.keepCapacity(q, { perSecond: 8.25, at: 2_000 });
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) await s.meter.keepCapacity(q, { perSecond: bad, at: 3_000 });
    await s.meter.keepCapacity(q, { perSecond: 4, at: 1.5 });
    expect(await s.meter.keptCapacity(q)).toEqual({ perSecond: 8.25, at: 2_000 });
    expect(await s.meter.keptCapacity(url())).toBeUndefined(); // each queue its own
  });

  it('never rejects when memcached cannot be reached: adds are lost, reads answer undefined', async () => {
    const down = await s.unreachable();
    await expect(down.add(url(), 3)).resolves.toBeUndefined();
    expect(await down.read(url())).toBeUndefined();
    await expect(down.addHeld(url(), 1, 3)).resolves.toBeUndefined();
    expect(await down.readHeld(url(), 1)).toBeUndefined();
    await expect(down.keepCapacity(url(), { perSecond: 1, at: 1 })).resolves.toBeUndefined();
    expect(await down.keptCapacity(url())).toBeUndefined();
  });
});
