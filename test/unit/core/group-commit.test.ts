import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../src/core/group-commit.js';

/** A commit whose calls return when the test says so; it records each call's items. */
function gate() {
  const calls: string[][] = [];
  const open: (() => void)[] = [];
  const commit = (items: string[]) => {
    calls.push(items);
    return new Promise<string[]>((resolve, reject) =>
      open.push(() => (items.includes('boom') ? reject(new Error('store down')) : resolve(items.map((i) => `${i}!`)))),
    );
  };
  const release = async () => {
    open.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { calls, commit, release };
}

describe('GroupCommit', () => {
  it('sends an item at once in a call of its own while calls are free: no wait when idle', async () => {
    const g = gate();
    const gc = new GroupCommit(g.commit, { maxItems: 10, maxInFlight: 2, keyOf: (s) => s });
    const a = gc.add('a');
    const b = gc.add('b');
    expect(g.calls).toEqual([['a'], ['b']]);
    await g.release();
    await g.release();
    expect(await Promise.all([a, b])).toEqual(['a!', 'b!']);
    expect(gc.idle).toBe(true);
  });

  it('items that come while every call is out go together in the next, up to maxItems, in order', async () => {
    const g = gate();
    const gc = new GroupCommit(g.commit, { maxItems: 3, maxInFlight: 1, keyOf: (s) => s });
    const all = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => gc.add(x));
    expect(g.calls).toEqual([['a']]);
    await g.release();
    expect(g.calls).toEqual([['a'], ['b', 'c', 'd']]);
    await g.release();
    await g.release();
    expect(g.calls).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f']]);
    expect(await Promise.all(all)).toEqual(['a!', 'b!', 'c!', 'd!', 'e!', 'f!']);
  });

  it('never puts two items with one key in a call: the later waits for the next', async () => {
    const g = gate();
    const gc = new GroupCommit(g.commit, { maxItems: 10, maxInFlight: 1, keyOf: (s) => s.split(':')[0]! });
    const all = ['x:1', 'y:1', 'x:2', 'z:1', 'x:3'].map((x) => gc.add(x));
    await g.release();
    expect(g.calls[1]).toEqual(['y:1', 'x:2', 'z:1']);
    await g.release();
    await g.release();
    expect(g.calls[2]).toEqual(['x:3']);
    await Promise.all(all);
  });

  it('a long backlog (a slow store) goes out in order, each item once, one per key a call, through many calls', async () => {
    const g = gate();
    const gc = new GroupCommit(g.commit, { maxItems: 25, maxInFlight: 1, keyOf: (s) => s.split(':')[0]! });
    // 5,000 items over 400 keys: each key's items 400 apart, and every 7th item repeats the key before it.
    const items = Array.from({ length: 5_000 }, (_, n) => (n % 7 === 6 ? `k${(n - 1) % 400}:${n}` : `k${n % 400}:${n}`));
    const all = items.map((x) => gc.add(x));
    while (!gc.idle) await g.release();
    expect(await Promise.all(all)).toEqual(items.map((x) => `${x}!`));
    const sent = g.calls.flat();
    expect([...sent].sort()).toEqual([...items].sort()); // each once
    for (const call of g.calls) {
      expect(call.length).toBeLessThanOrEqual(25);
      expect(new Set(call.map((x) => x.split(':')[0])).size).toBe(call.length);
    }
    // Each key's items go in the order they were added.
    const order = new Map(sent.map((x, i) => [x, i]));
    const byKey = new Map<string, number[]>();
    for (const x of items) byKey.set(x.split(':')[0]!, [...(byKey.get(x.split(':')[0]!) ?? []), order.get(x)!]);
    for (const positions of byKey.values()) expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(g.calls.length).toBeLessThan(260); // about 5,000 / 25, and a few more for the repeats
  });

  it('a call that fails rejects its own items only; the next call goes on, and it tells when idle', async () => {
    const g = gate();
    let idle = 0;
    const gc = new GroupCommit(g.commit, { maxItems: 10, maxInFlight: 1, keyOf: (s) => s, onIdle: () => idle++ });
    const outcome = (p: Promise<string>) => p.then(String, (e: Error) => e.message);
    const first = outcome(gc.add('a'));
    const together = ['boom', 'b', 'c'].map((x) => outcome(gc.add(x)));
    await g.release(); // a
    await g.release(); // boom, b, c together
    expect(await first).toBe('a!');
    expect(await Promise.all(together)).toEqual(['store down', 'store down', 'store down']);
    expect(idle).toBe(1);
    const again = gc.add('d');
    await g.release();
    expect(await again).toBe('d!');
    expect(idle).toBe(2);
  });
});
