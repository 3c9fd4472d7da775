import { describe, expect, it } from 'vitest';
import { Spillover, SpilloverGate, type SpilloverSettings } from '../../../src/producer/spillover.js';
import { MemoryAllowances } from '../../../src/testing/memory-allowances.js';

const gate = (weights: Record<string, number> = {}) =>
  new SpilloverGate({ queueUrl: 'http://127.0.0.1:4566/000000000000/jobs-spill', ratePerSecond: 2, burst: 3, weights });
const admitted = (g: SpilloverGate, key: string, n: number, now: number) =>
  Array.from({ length: n }, () => g.admit(key, now)).filter(Boolean).length;

describe('SpilloverGate', () => {
  it('lets a key send its burst to the main queue, spills the rest, and refills at its rate', () => {
    const g = gate();
    expect(admitted(g, 'acme', 10, 0)).toBe(3);
    expect(g.admit('acme', 499)).toBe(false); // 0.998 of a token
    expect(g.admit('acme', 500)).toBe(true); // one token after 0.5 s at 2/s
    expect(admitted(g, 'acme', 10, 10_000)).toBe(3); // never more than the burst
  });

  it('keeps keys apart: one key past its allowance does not spill another', () => {
    const g = gate();
    admitted(g, 'noisy', 1_000, 0);
    expect(g.admit('quiet', 0)).toBe(true);
  });

  it('scales a key by its weight', () => {
    const g = gate({ big: 3 });
    expect(admitted(g, 'big', 20, 0)).toBe(9);
    expect(admitted(g, 'big', 20, 1_000)).toBe(6); // 3 × 2 per second
    expect(admitted(g, 'small', 20, 0)).toBe(3);
  });

  it('stays bounded with very many keys', () => {
    const g = gate();
    for (let i = 0; i < 25_000; i++) g.admit(`k${i}`, 0);
    expect(g.admit('k0', 0)).toBe(true); // forgotten, so full again: no key is starved by the bound
  });
});

describe('Spillover: shared allowances and tenant groups', () => {
  const settings = (over: Partial<SpilloverSettings> = {}): SpilloverSettings => ({
    queueUrl: 'http://127.0.0.1:4566/000000000000/jobs-spill',
    ratePerSecond: 1,
    burst: 4,
    weights: {},
    ...over,
  });
  const T0 = 1_700_000_000_000;

  it('shares one allowance between producers (two Spillovers on one store)', async () => {
    const store = new MemoryAllowances();
    const a = new Spillover(settings(), store);
    const b = new Spillover(settings(), store);
    expect(await a.admit('acme', 3, T0)).toBe(3);
    expect(await b.admit('acme', 3, T0)).toBe(1); // not 3: the burst is the fleet's, not each producer's
    // Without a store each process meters on its own: two producers give acme two bursts.
    expect(await new Spillover(settings(), undefined).admit('acme', 4, T0)).toBe(4);
  });

  it('never meters a tenant with a queue of its own: all its jobs stay, no allowance is taken, its group is not asked', async () => {
    const store = new MemoryAllowances();
    const s = new Spillover(settings({ tenantGroup: () => 'has space' }), store, ['big']);
    expect(await s.admit('big', 50, T0)).toBe(50);
    expect(s.keyOf('big')).toBe('big');
    // The store was not touched: a producer without tenantQueues still has big's whole burst.
    const fresh = await new Spillover(settings(), new MemoryAllowances()).admit('big', 50, T0);
    expect(await new Spillover(settings(), store).admit('big', 50, T0)).toBe(fresh);
    expect(fresh).toBeLessThan(50);
  });

  it('meters every tenant of a group under one key (a customer spread over many names)', async () => {
    const store = new MemoryAllowances();
    const s = new Spillover(settings({ tenantGroup: (t) => t.split(':')[0]! }), store);
    expect(await s.admit('acme:a', 2, T0)).toBe(2);
    expect(await s.admit('acme:b', 2, T0)).toBe(2);
    expect(await s.admit('acme:c', 2, T0)).toBe(0); // acme's burst of 4 is spent, whatever the name
    expect(await s.admit('globex:a', 1, T0)).toBe(1);
  });

  it('scales a group by its weight', async () => {
    const s = new Spillover(settings({ tenantGroup: () => 'big', weights: { big: 2 } }), new MemoryAllowances());
    expect(await s.admit('anyone', 10, T0)).toBe(8);
  });

  it('meters on its own buckets while the store cannot be asked, and asks it again 10 s later', async () => {
    const store = Object.assign(new MemoryAllowances(), { down: true });
    const s = new Spillover(settings(), store);
    expect(await s.admit('acme', 6, T0)).toBe(4); // the local burst
    store.down = false;
    await store.take('acme', 4, { perSecond: 1, burst: 4 }, T0 + 9_000); // the shared burst, spent elsewhere
    expect(await s.admit('acme', 1, T0 + 9_000)).toBe(1); // not asked yet: the local bucket refilled by 9
    expect(await s.admit('acme', 1, T0 + 10_000)).toBe(0); // asked again: spent
  });

  it('refuses a group name that is not a tenant name, naming the option', async () => {
    const s = new Spillover(settings({ tenantGroup: () => 'has space' }), undefined);
    await expect(s.admit('acme', 1, T0)).rejects.toThrow(/options\.spillover\.tenantGroup/);
  });
});
