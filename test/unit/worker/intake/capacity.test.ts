import { describe, expect, it, vi } from 'vitest';
import { LONG_POLL_MS, ReceiveCapacity } from '../../../../src/worker/intake/capacity.js';
import type { TierPick } from '../../../../src/worker/config.js';

describe('ReceiveCapacity', () => {
  it('reserves at most 10 and never more than is free', async () => {
    let held = 0;
    const c = new ReceiveCapacity({ concurrency: 25, prefetch: 0 }, { running: () => held, buffered: () => 0 });
    expect(await c.reserve()).toBe(10);
    expect(await c.reserve()).toBe(10);
    expect(await c.reserve()).toBe(5);
    expect(c.reserved).toBe(25);
    held = 3;
    c.returnReserved(10); // 3 came back from that receive
    expect(await c.reserve()).toBe(7);
  });

  it('lets pollers woken together share slots instead of each counting them all', async () => {
    let held = 3;
    const c = new ReceiveCapacity({ concurrency: 3, prefetch: 0 }, { running: () => held, buffered: () => 0 });
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
    const c = new ReceiveCapacity({ concurrency: 1, prefetch: 0 }, { running: () => 0, buffered: () => 0 });
    const order: string[] = [];
    expect(await c.reserve()).toBe(1); // poller A holds the only slot
    const b = c.reserve().then((n) => order.push(`B${n}`));
    c.returnReserved(1); // A's receive ends: B, who was waiting, gets it
    const a = c.reserve().then((n) => order.push(`A${n}`)); // A asks again and waits
    await b;
    expect(order).toEqual(['B1']);
    c.returnReserved(1);
    await a;
    expect(order).toEqual(['B1', 'A1']);
  });

  it("counts a queue's waiting messages against that queue only: it receives as they leave, the others go on", async () => {
    const limited = { name: 'limited', weight: 1, rank: 1 };
    const other = { name: 'other', weight: 1, rank: 1 };
    let waiting = 4; // of the limited queue, past their room
    const c = new ReceiveCapacity<typeof limited>(
      { concurrency: 10, prefetch: 0 },
      { running: () => 0, buffered: () => 0, waiting: (lane) => (lane === limited ? waiting : 0) },
    );
    expect(await c.reserve(limited)).toBe(6); // 10 free, 4 of them taken by its waiting messages
    expect(await c.reserve(other)).toBe(4); // the rest, to the other queue
    c.returnReserved(6, limited);
    c.returnReserved(4, other);
    waiting = 10;
    let got: number | undefined;
    void c.reserve(limited).then((n) => (got = n));
    await Promise.resolve();
    expect(got).toBeUndefined(); // none until some leave
    expect(await c.reserve(other)).toBe(10);
    c.returnReserved(10, other);
    waiting = 0;
    c.grant();
    await Promise.resolve();
    expect(got).toBe(10);
  });

  it('a queue braked by its waiting messages receives a full receive at a time, not one per message that leaves', async () => {
    const limited = { name: 'limited', weight: 1, rank: 1 };
    // The worker counts waiting messages past their room in steps of 10.
    let running = 9;
    const c = new ReceiveCapacity<typeof limited>(
      { concurrency: 10, prefetch: 10 },
      { running: () => running, buffered: () => 0, waiting: (lane) => (lane === limited ? 10 : 0) },
    );
    let got: number | undefined;
    void c.reserve(limited).then((n) => (got = n));
    // Room for 1, then 2, … 9 as jobs end: none of those asks for so few.
    for (; running > 0; running--) {
      c.grant();
      await Promise.resolve();
      expect(got).toBeUndefined();
    }
    c.grant(); // room for 10
    await Promise.resolve();
    expect(got).toBe(10);
  });

  it('a braked queue whose room can never hold ten receives what it can hold', async () => {
    const limited = { name: 'limited', weight: 1, rank: 1 };
    const c = new ReceiveCapacity<typeof limited>(
      { concurrency: 10, prefetch: 5 },
      { running: () => 0, buffered: () => 0, waiting: (lane) => (lane === limited ? 10 : 0) },
    );
    expect(await c.reserve(limited)).toBe(5);
  });

  it('wakes waiters with 0 when closed, and answers 0 after', async () => {
    const c = new ReceiveCapacity({ concurrency: 0, prefetch: 0 }, { running: () => 0, buffered: () => 0 });
    const waiting = c.reserve();
    c.close();
    expect(await waiting).toBe(0);
    expect(await c.reserve()).toBe(0);
  });
});

describe('ReceiveCapacity with lanes', () => {
  const high = { name: 'high', weight: 1, rank: 0 };
  const low = { name: 'low', weight: 1, rank: 2 };
  type L = typeof high;

  it('strict: a waiting poller of a higher tier is served first, a lower one at its minimum share', async () => {
    const c = new ReceiveCapacity<L>(
      { concurrency: 1, prefetch: 0, pick: { mode: 'strict', minShare: 0.25 } },
      { running: () => 0, buffered: () => 0 },
    );
    expect(await c.reserve(high)).toBe(1);
    const served: string[] = [];
    // Both lanes wait for the one slot, each asking again as soon as it is served.
    const loop = async (l: L) => {
      for (let i = 0; i < 8; i++) {
        if ((await c.reserve(l)) === 0) return;
        served.push(l.name);
        queueMicrotask(() => c.returnReserved(1, l));
      }
    };
    const both = Promise.all([loop(low), loop(high)]);
    c.returnReserved(1, high);
    await new Promise((r) => setTimeout(r, 10));
    c.close();
    await both;
    expect(served.slice(0, 8).filter((n) => n === 'low').length).toBe(2);
  });

  it('strict: with the handlers busy, a lower lane holds no more of the buffer than its share, so the higher lane keeps messages ready', async () => {
    const buffered = new Map<L, number>([
      [high, 0],
      [low, 0],
    ]);
    // concurrency + prefetch = 14: a receive waits for 7 free slots while every handler is busy.
    const c = new ReceiveCapacity<L>(
      { concurrency: 4, prefetch: 10, pick: { mode: 'strict', minShare: 0.05 } },
      { running: () => 4, buffered: (l) => (l === undefined ? buffered.get(high)! + buffered.get(low)! : buffered.get(l)!) },
    );
    // Every handler slot is taken; both lanes have work.
    expect(await c.reserve(high)).toBe(10);
    buffered.set(high, 3);
    c.returnReserved(10, high); // 3 came
    expect(await c.reserve(low)).toBe(1); // low's share of the buffer: 5% of 10, at least 1
    buffered.set(low, 1);
    c.returnReserved(1, low);
    buffered.set(high, 2); // a high one started: 7 slots are free
    let lowGot: number | undefined;
    void c.reserve(low).then((n) => (lowGot = n));
    await Promise.resolve();
    expect(lowGot).toBeUndefined(); // low waits: it holds its share
    expect(await c.reserve(high)).toBe(7); // high takes the free slots, though low asked first
    c.close();
    await Promise.resolve();
    expect(lowGot).toBe(0);
  });

  it('with every handler busy and messages ready, a poller waits for a full receive rather than take one or two', async () => {
    let running = 10;
    let buffered = 20;
    // concurrency + prefetch = 30: a full receive is 10.
    const c = new ReceiveCapacity({ concurrency: 10, prefetch: 20 }, { running: () => running, buffered: () => buffered });
    let got: number | undefined;
    void c.reserve().then((n) => (got = n));
    for (const ready of [19, 15, 11]) {
      buffered = ready;
      c.grant();
      await Promise.resolve();
      expect(got).toBeUndefined();
    }
    buffered = 10;
    c.grant();
    await Promise.resolve();
    expect(got).toBe(10);
    // A handler slot about to go idle (nothing buffered or asked for to take it): whatever is free is received at once.
    got = undefined;
    buffered = 19;
    c.returnReserved(10);
    void c.reserve().then((n) => (got = n));
    await Promise.resolve();
    expect(got).toBeUndefined();
    running = 9;
    buffered = 0;
    c.grant();
    await Promise.resolve();
    expect(got).toBe(10);
  });

  it('buffered messages that cannot start (a FIFO group behind its running message) do not keep a slot from being filled', async () => {
    // FIFO: 1 running, 9 buffered of the same group, none can start.
    const c = new ReceiveCapacity({ concurrency: 10, prefetch: 4 }, { running: () => 1, buffered: () => 9, startable: () => 0 });
    expect(await c.reserve()).toBe(4);
  });

  it("a probe of an empty queue, or a receive out LONG_POLL_MS, is not counted on to fill a handler's slot", async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout'] });
    try {
      const a: L = { name: 'a', weight: 1, rank: 0 };
      const b: L = { name: 'b', weight: 1, rank: 0 };
      let running = 10;
      const c = new ReceiveCapacity<L>({ concurrency: 10, prefetch: 10 }, { running: () => running, buffered: () => 0 });
      expect(await c.reserve(a)).toBe(10); // out on a queue that has run dry
      running = 9;
      let got: number | undefined;
      void c.reserve(b).then((n) => (got = n));
      await Promise.resolve();
      expect(got).toBeUndefined(); // 10 − 9 − 10 < 0: a's receive may still bring one
      await vi.advanceTimersByTimeAsync(LONG_POLL_MS);
      expect(got).toBe(1); // it has not: the idle slot is filled
      c.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a small room receives at half of it: prefetch still runs ahead of the handlers', async () => {
    let buffered = 2;
    const c = new ReceiveCapacity({ concurrency: 1, prefetch: 2 }, { running: () => 1, buffered: () => buffered });
    let got: number | undefined;
    void c.reserve().then((n) => (got = n));
    await Promise.resolve();
    expect(got).toBeUndefined(); // 0 free
    buffered = 1;
    c.grant();
    await Promise.resolve();
    expect(got).toBeUndefined(); // 1 free: the handler has one to go on with
    buffered = 0;
    c.grant();
    await Promise.resolve();
    expect(got).toBe(2); // half the room, before the handler runs dry
  });

  it('a lane whose receive has been out LONG_POLL_MS (an empty queue) no longer keeps the others to their quota', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const main: L = { name: 'main', weight: 1, rank: 0 };
      const spill: L = { name: 'spill', weight: 1, rank: 1 };
      const c = new ReceiveCapacity<L>(
        { concurrency: 10, prefetch: 20, pick: { mode: 'strict', minShare: 0.05 } },
        { running: () => 10, buffered: () => 0 },
      );
      // main's last poll found some; its next one is out on a queue that ran dry.
      expect(await c.reserve(main)).toBe(10);
      // spill, the lower tier, holds its minimum share of the buffer while main has work: 1 of 20.
      expect(await c.reserve(spill)).toBe(1);
      c.returnReserved(1, spill); // nothing came
      vi.setSystemTime(Date.now() + LONG_POLL_MS);
      expect(await c.reserve(spill)).toBe(10);
      c.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a lane alone, or lanes without tiers, may fill the whole buffer', async () => {
    const c = new ReceiveCapacity<L>(
      { concurrency: 2, prefetch: 10, pick: { mode: 'strict', minShare: 0.05 } },
      { running: () => 2, buffered: () => 0 },
    );
    expect(await c.reserve(low)).toBe(10);
  });

  describe('a queue that brings batch jobs', () => {
    const batchQueue = { name: 'batch', weight: 1, rank: 1 };
    const plainQueue = { name: 'plain', weight: 1, rank: 1 };
    type Q = typeof batchQueue;
    interface Now {
      room: number;
      running: number;
      /** Buffered messages of each queue (for the batch queue: other jobs' messages it brought). */
      buffered: Map<Q, number>;
      feeds: boolean;
    }
    function capacity(now: Now, limits: { concurrency: number; prefetch: number; pick?: TierPick } = { concurrency: 2, prefetch: 0 }) {
      return new ReceiveCapacity<Q>(
        { ...limits, receiveConcurrency: 4 },
        {
          running: () => now.running,
          buffered: (q) => (q === undefined ? [...now.buffered.values()].reduce((a, b) => a + b, 0) : (now.buffered.get(q) ?? 0)),
          batches: { feeds: (q) => now.feeds && q === batchQueue, room: () => now.room },
        },
      );
    }
    const state = (o: Partial<Now> = {}): Now => ({ room: 2_000, running: 0, buffered: new Map(), feeds: true, ...o });

    it('fills the batch budget with full receives, beyond concurrency + prefetch', async () => {
      const c = capacity(state());
      // Four polls out at once, ten each: the handlers' room (2) would allow one receive of 2.
      expect(await Promise.all([1, 2, 3, 4].map(() => c.reserve(batchQueue)))).toEqual([10, 10, 10, 10]);
      expect(c.reserved).toBe(40);
    });

    it('receives from it only while the budget has room, and as room comes back', async () => {
      const now = state({ room: 15 });
      const c = capacity(now);
      expect(await c.reserve(batchQueue)).toBe(10);
      expect(await c.reserve(batchQueue)).toBe(5);
      let third: number | undefined;
      void c.reserve(batchQueue).then((n) => (third = n));
      await Promise.resolve();
      expect(third).toBeUndefined(); // the budget is promised in full
      now.room = 5; // the two receives brought 15 items, then a flush of 5 ended
      c.returnReserved(10, batchQueue);
      c.returnReserved(5, batchQueue);
      await Promise.resolve();
      expect(third).toBe(5);
    });

    it("does not take the handlers' room from a queue of other jobs", async () => {
      const c = capacity(state({ running: 1 }));
      for (let i = 0; i < 4; i++) expect(await c.reserve(batchQueue)).toBe(10);
      // One handler runs, one slot is free: the other queue still gets it while the batch polls are out.
      expect(await c.reserve(plainQueue)).toBe(1);
      expect(c.hasRoomFor(1, plainQueue)).toBe(false);
    });

    it('holds no more than one round of its receives of other jobs beyond concurrency + prefetch', async () => {
      // The queue carries other jobs too: 41 of theirs wait unstarted (the handlers' room is 2).
      const now = state({ buffered: new Map([[batchQueue, 41]]) });
      const c = capacity(now);
      // 2 - 41 + one round of 40: room for one message more, whatever the budget's room.
      expect(await c.reserve(batchQueue)).toBe(1);
      let next: number | undefined;
      void c.reserve(batchQueue).then((n) => (next = n));
      await Promise.resolve();
      expect(next).toBeUndefined();
      now.buffered.set(batchQueue, 20); // they start and leave
      c.grant();
      await Promise.resolve();
      expect(next).toBe(10);
    });

    it('serves an idle handler at once while batch receives are out (they bring no handler work)', async () => {
      const now = state({ running: 9 });
      const c = capacity(now, { concurrency: 10, prefetch: 0 });
      for (let i = 0; i < 4; i++) expect(await c.reserve(batchQueue)).toBe(10);
      // One slot idle: a receive for it goes now, not once five are free (half of concurrency + prefetch).
      expect(await c.reserve(plainQueue)).toBe(1);
    });

    it('is not held to a tier quota of the prefetch buffer', async () => {
      const c = capacity(state(), { concurrency: 2, prefetch: 2, pick: { mode: 'strict', minShare: 0.05 } });
      void c.reserve(plainQueue); // the other queue is busy too
      expect(await Promise.all([1, 2, 3, 4].map(() => c.reserve(batchQueue)))).toEqual([10, 10, 10, 10]);
    });

    it('gives each queue of batch jobs a round of its own', async () => {
      const second = { name: 'batch-2', weight: 1, rank: 1 };
      const c = new ReceiveCapacity<Q>(
        { concurrency: 2, prefetch: 0, receiveConcurrency: 4 },
        { running: () => 0, buffered: () => 0, batches: { feeds: () => true, room: () => 2_000 } },
      );
      const polls = [batchQueue, second].flatMap((q) => [1, 2, 3, 4].map(() => c.reserve(q)));
      expect(await Promise.all(polls)).toEqual(Array(8).fill(10));
    });

    it("a queue not known to bring batch jobs gets the handlers' room only", async () => {
      const c = capacity(state({ feeds: false }));
      expect(await c.reserve(batchQueue)).toBe(2);
    });
  });
});
