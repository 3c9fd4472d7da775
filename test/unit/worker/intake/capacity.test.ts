import { describe, expect, it } from 'vitest';
import { ReceiveCapacity } from '../../../../src/worker/intake/capacity.js';

describe('ReceiveCapacity', () => {
  it('reserves at most 10 and never more than is free', async () => {
    let held = 0;
    const c = new ReceiveCapacity(25, () => held);
    expect(await c.reserve()).toBe(10);
    expect(await c.reserve()).toBe(10);
    expect(await c.reserve()).toBe(5);
    expect(c.reserved).toBe(25);
    held = 3;
    c.returnSlots(10); // 3 came back from that receive
    expect(await c.reserve()).toBe(7);
  });

  it('lets pollers woken together share slots instead of each counting them all', async () => {
    let held = 3;
    const c = new ReceiveCapacity(3, () => held);
    let second: number | undefined;
    const a = c.reserve();
    void c.reserve().then((n) => (second = n));
    held = 0;
    c.grant(); // three slots free up at once
    expect(await a).toBe(3);
    await Promise.resolve();
    expect(second).toBeUndefined(); // still waiting: the three are taken
    expect(c.reserved).toBe(3);
  });

  it('serves waiting pollers in turn: the one that freed a slot goes behind', async () => {
    const c = new ReceiveCapacity(1, () => 0);
    const order: string[] = [];
    expect(await c.reserve()).toBe(1); // poller A holds the only slot
    const b = c.reserve().then((n) => order.push(`B${n}`));
    c.returnSlots(1); // A's receive ends: B, who was waiting, gets it
    const a = c.reserve().then((n) => order.push(`A${n}`)); // A asks again and waits
    await b;
    expect(order).toEqual(['B1']);
    c.returnSlots(1);
    await a;
    expect(order).toEqual(['B1', 'A1']);
  });

  it('wakes waiters with 0 when closed, and answers 0 after', async () => {
    const c = new ReceiveCapacity(0, () => 0);
    const waiting = c.reserve();
    c.close();
    expect(await waiting).toBe(0);
    expect(await c.reserve()).toBe(0);
  });
});

describe('ReceiveCapacity with lanes', () => {
  it('strict: a waiting poller of a higher tier is served first, a lower one at its minimum share', async () => {
    const high = { weight: 1, rank: 0 };
    const low = { weight: 1, rank: 2 };
    const c = new ReceiveCapacity<typeof high>(1, () => 0, { mode: 'strict', minShare: 0.25 });
    expect(await c.reserve(high)).toBe(1);
    const served: string[] = [];
    // Both lanes wait for the one slot, each asking again as soon as it is served.
    const loop = async (l: typeof high, name: string) => {
      for (let i = 0; i < 8; i++) {
        if ((await c.reserve(l)) === 0) return;
        served.push(name);
        queueMicrotask(() => c.returnSlots(1));
      }
    };
    const both = Promise.all([loop(low, 'low'), loop(high, 'high')]);
    c.returnSlots(1);
    await new Promise((r) => setTimeout(r, 10));
    c.close();
    await both;
    expect(served.slice(0, 8).filter((n) => n === 'low').length).toBe(2);
  });
});
