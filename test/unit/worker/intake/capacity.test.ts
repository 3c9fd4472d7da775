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
