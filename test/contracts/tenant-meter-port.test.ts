import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import type { TenantMeter, TenantReport } from '../../src/ports/tenant-meter.js';
import { MemoryTenantMeter } from '../../src/testing/memory-tenant-meter.js';
import { freePort } from '../helpers/memcached.js';
import { LOCAL_MEMCACHED } from '../helpers/stack.js';

/**
 * The tenant meter's contract (what the dashboard's tenants page reads): against the in-memory
 * meter and memcached's, so the fake cannot drift.
 */
const prefix = `tenants-${randomUUID().slice(0, 8)}:`;
const memcached = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix });
const other = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix });
const unreachable: MemcachedLock[] = [];
afterAll(() => {
  memcached.close();
  other.close();
  for (const l of unreachable) l.close();
});

interface Subject {
  readonly meter: TenantMeter;
  /** Another process's view of the same reports (a dashboard beside the workers). */
  readonly peer: TenantMeter;
  unreachable(): Promise<TenantMeter>;
}

const memory = new MemoryTenantMeter();
const subjects: [string, Subject][] = [
  [
    'in-memory tenant meter',
    { meter: memory, peer: memory, unreachable: async () => Object.assign(new MemoryTenantMeter(), { down: true }) },
  ],
  [
    "memcached's tenant meter (MemcachedLock.tenants)",
    {
      meter: memcached.tenants,
      peer: other.tenants,
      unreachable: async () => {
        const lock = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 });
        unreachable.push(lock);
        return lock.tenants;
      },
    },
  ],
];

const none = { started: 0, waitMsTotal: 0, waitMsMax: 0, deferred: 0, failed: 0, deadLettered: 0, running: 0 };
function reportOf(worker: string, at: number, tenant: string, started: number): TenantReport {
  return {
    worker,
    at,
    periodMs: 15_000,
    tenants: [{ tenant, cap: 2, ...none, started, waitMsTotal: started * 100, waitMsMax: 250, running: 1 }],
    others: { ...none, tenants: 3, started: 9, waitMsTotal: 90 },
  };
}

describe("memcached's tenant meter when a slot's key is full", () => {
  it('drops the reports that do not fit, without taking memcached for down or failing the lock', async () => {
    const changes: boolean[] = [];
    const lock = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix, onAvailability: (up) => changes.push(up) });
    unreachable.push(lock);
    const q = `http://127.0.0.1:4566/000000000000/full-${randomUUID().slice(0, 8)}`;
    const at = Date.now();
    const big = (i: number): TenantReport => ({
      ...reportOf(`w-${i}`, at, 't', 1),
      tenants: Array.from({ length: 20 }, (_, k) => ({ ...none, tenant: `${'x'.repeat(120)}-${k}`, started: 1 })),
    });
    // About 3.5 KB each: 400 of them pass memcached's 1 MB item size.
    for (let i = 0; i < 400; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => lock.tenants.report(q, big(i + k))));
    const read = await lock.tenants.read(q, at - 1);
    expect(read!.length).toBeGreaterThan(100);
    expect(read!.length).toBeLessThan(400);
    expect(changes).toEqual([]); // never reported down
    expect(await lock.claim(`job-${randomUUID()}`, 'token', 30)).toBe('claimed'); // the lock works on
  });
});

describe.each(subjects)('tenant meter port contract: %s', (_name, s) => {
  const url = () => `http://127.0.0.1:4566/000000000000/q-${randomUUID().slice(0, 8)}`;

  it('reads nothing before the first report, then every worker’s reports, oldest first, from another client too', async () => {
    const q = url();
    expect(await s.peer.read(q, Date.now() - 60_000)).toEqual([]);
    const now = Date.now();
    const a = reportOf('w-a', now - 2_000, 'acme', 4);
    const b = reportOf('w-b', now - 1_000, 'globex', 7);
    // Several workers report at once: each one's report is kept (memcached: appended to one key).
    await Promise.all([s.meter.report(q, b), s.peer.report(q, a), s.meter.report(q, reportOf('w-c', now - 1_500, 'initech', 1))]);
    const read = await s.peer.read(q, now - 60_000);
    expect(read?.map((r) => r.worker)).toEqual(['w-a', 'w-c', 'w-b']);
    expect(read?.[0]).toEqual(a);
    expect(await s.meter.read(url(), now - 60_000)).toEqual([]); // each queue its own reports
  });

  it('reads back to the time asked, across minutes, and no further', async () => {
    const q = url();
    const now = Date.now();
    const times = [now - 5 * 60_000, now - 3 * 60_000, now - 61_000, now];
    for (const [i, at] of times.entries()) await s.meter.report(q, reportOf(`w-${i}`, at, 't', 1));
    expect((await s.peer.read(q, now - 4 * 60_000))?.map((r) => r.at)).toEqual(times.slice(1));
    expect((await s.peer.read(q, now - 10 * 60_000))?.length).toBe(4);
    expect(await s.peer.read(q, now + 1)).toEqual([]);
  });

  it('never rejects when memcached cannot be reached: reports are lost, reads answer undefined', async () => {
    const down = await s.unreachable();
    await expect(down.report(url(), reportOf('w', Date.now(), 't', 1))).resolves.toBeUndefined();
    expect(await down.read(url(), Date.now() - 60_000)).toBeUndefined();
  });
});
