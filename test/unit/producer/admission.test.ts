import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { QueueFullError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { admissionKey } from '../../../src/producer/admission/admission.js';
import { QueueEstimate } from '../../../src/producer/admission/estimate.js';
import { AdmissionGate } from '../../../src/producer/admission/gate.js';
import { createProducer } from '../../../src/producer/producer.js';
import { HELD_PERIOD_MS, type KeptCapacity } from '../../../src/ports/drain-meter.js';
import type { QueueCounts } from '../../../src/ports/queue-admin.js';
import { MemoryDrainMeter } from '../../../src/testing/memory-drain-meter.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';

// Admission's logic on given numbers and a hand-moved clock. Against a real worker draining a real
// queue: test/integration/admission.test.ts; under 3x load: npm run bench:admission.

const URL = 'http://127.0.0.1:4566/000000000000/jobs';

/** A queue whose counts and drain count the test sets, sampled on a clock the test moves. */
function queue() {
  const state = {
    backlog: 0,
    drained: undefined as number | undefined,
    t: 0,
    held: new Map<number, number>(),
    periodsRead: [] as number[],
    kept: undefined as KeptCapacity | undefined,
    /** SQS's in-flight count: running and held messages (bounds the workers' held reports). */
    inFlight: 1_000,
    keeps: [] as KeptCapacity[],
  };
  const estimate = new QueueEstimate(
    {
      counts: async (): Promise<QueueCounts> => ({ visible: state.backlog, inFlight: state.inFlight, delayed: 0 }),
      drained: async () => state.drained,
      held: async (_url, period) => {
        state.periodsRead.push(period);
        return state.held.get(period);
      },
      kept: async () => state.kept,
      keep: async (_url, capacity) => {
        state.keeps.push(capacity);
      },
    },
    URL,
    5_000,
  );
  const at = (t: number) => {
    state.t = t;
    return estimate.sample(() => t);
  };
  return { state, estimate, at };
}

describe('QueueEstimate', () => {
  it('has no capacity until work has waited 3 s; then the drain rate over that, then over the window', async () => {
    const q = queue();
    q.state.backlog = 500;
    q.state.drained = 1_000;
    await q.at(0);
    expect(q.estimate.view(0)).toEqual({ backlog: 500, capacity: undefined, basis: 'none', held: 0 });
    for (let s = 1; s <= 5; s++) {
      q.state.drained += s <= 3 ? 10 : 20;
      q.state.backlog -= 20;
      await q.at(s * 1_000);
      if (s === 2) expect(q.estimate.view(2_000)?.capacity).toBeUndefined();
      if (s === 3) expect(q.estimate.view(3_000)?.capacity).toBe(10);
    }
    q.state.drained += 20;
    q.state.backlog -= 20;
    await q.at(6_000);
    expect(q.estimate.view(6_000)?.capacity).toBe(16); // (10+10+20+20+20) over 5 s, after the first
    q.state.drained += 20;
    q.state.backlog += 20;
    await q.at(7_000);
    expect(q.estimate.view(7_000)).toEqual({ backlog: 400, capacity: 18, basis: 'measured', held: 0 });
    // Projected between samples: 400 less 1.5 s at 18/s, plus what this producer sent since.
    q.estimate.sent(7);
    expect(q.estimate.view(8_500)).toEqual({ backlog: 380, capacity: 18, basis: 'measured', held: 0 });
  });

  it('an idle fleet drains only what arrives: that rate is not its capacity (kept, or raised)', async () => {
    const q = queue();
    q.state.backlog = 100;
    q.state.drained = 0;
    for (let s = 0; s <= 5; s++) {
      if (s > 0) q.state.drained += 30;
      await q.at(s * 1_000);
    }
    expect(q.estimate.view(5_000)?.capacity).toBe(30);
    q.state.backlog = 0; // idle now: 5 per second arrive and are drained at once
    for (let s = 6; s <= 12; s++) {
      q.state.drained += 5;
      await q.at(s * 1_000);
    }
    expect(q.estimate.view(12_000)?.capacity).toBe(30);
    for (let s = 13; s <= 19; s++) {
      q.state.drained += 50; // more workers, still idle: the higher rate is a floor of the capacity
      await q.at(s * 1_000);
    }
    expect(q.estimate.view(19_000)?.capacity).toBe(50);
  });

  it('a counter that restarted (evicted) starts the window again; no counter, no capacity', async () => {
    const q = queue();
    q.state.backlog = 100;
    q.state.drained = 10_000;
    await q.at(0);
    q.state.drained = 5; // evicted and recreated
    for (let s = 1; s <= 3; s++) await q.at(s * 1_000);
    expect(q.estimate.view(3_000)?.capacity).toBeUndefined();
    // Work waited and nothing was drained: slow jobs, until a minute says the workers are stopped (capacity 0, refuse).
    await q.at(30_000);
    expect(q.estimate.view(30_000)?.capacity).toBeUndefined();
    await q.at(61_000);
    expect(q.estimate.view(61_000)?.capacity).toBe(0);
    const none = queue();
    none.state.backlog = 100;
    for (let s = 0; s <= 6; s++) await none.at(s * 1_000);
    expect(none.estimate.view(6_000)).toEqual({ backlog: 100, capacity: undefined, basis: 'none', held: 0 });
  });

  it('counts what the workers hold unstarted as backlog: the larger of the last two whole held periods (clocks a few seconds apart)', async () => {
    const q = queue();
    q.state.backlog = 50;
    q.state.drained = 0;
    const t = 10 * HELD_PERIOD_MS + 500; // half a second into period 10
    q.state.held.set(9, 12); // two workers' reports for period 9, summed
    q.state.held.set(8, 11);
    q.state.held.set(10, 3); // period 10 still being reported: not read
    await q.at(t);
    expect(q.state.periodsRead.sort()).toEqual([8, 9]);
    expect(q.estimate.view(t)).toMatchObject({ backlog: 62, held: 12 });
    // A producer whose clock runs ahead reads a period the workers have not added to yet (11): the one before (10) counts.
    await q.at(12 * HELD_PERIOD_MS + 100);
    expect(q.estimate.view(12 * HELD_PERIOD_MS + 100)?.backlog).toBe(53);
    // No report (no worker held any, or the sums expired): nothing held.
    await q.at(20 * HELD_PERIOD_MS);
    expect(q.estimate.view(20 * HELD_PERIOD_MS)?.backlog).toBe(50);
  });

  it('before measuring: a kept capacity, whole when fresh (under a minute), half when older; what the workers were seen to drain, if more', async () => {
    const fresh = queue();
    fresh.state.kept = { perSecond: 20, at: 0 };
    await fresh.at(30_000);
    expect(fresh.estimate.view(30_000)).toMatchObject({ capacity: 20, basis: 'kept', held: 0 });
    const old = queue();
    old.state.kept = { perSecond: 20, at: 0 };
    old.state.backlog = 0; // idle: what it drains is what arrives
    old.state.drained = 0;
    await old.at(86_400_000);
    expect(old.estimate.view(86_400_000)).toMatchObject({ capacity: 10, basis: 'kept', held: 0 });
    for (let s = 1; s <= 5; s++) {
      old.state.drained += 12;
      await old.at(86_400_000 + s * 1_000);
    }
    // 12/s drained with no work waiting: at least that much capacity, more than half the kept.
    expect(old.estimate.view(86_405_000)).toMatchObject({ capacity: 12, basis: 'drained', held: 0 });
    // Work waits now: measured.
    old.state.backlog = 300;
    for (let s = 6; s <= 17; s++) {
      old.state.drained += 18;
      await old.at(86_400_000 + s * 1_000);
    }
    expect(old.estimate.view(86_417_000)).toMatchObject({ capacity: 18, basis: 'measured', held: 0 });
    // Kept for the producers to come, at most every 10 s: the drained floor first, then the measure.
    expect(old.state.keeps).toEqual([
      { perSecond: 12, at: 86_403_000 },
      { perSecond: 18, at: 86_413_000 },
    ]);
    // Read once, at the first sample.
    old.state.kept = { perSecond: 1, at: 86_417_000 };
    old.state.drained += 18;
    await old.at(86_418_000);
    expect(old.estimate.view(86_418_000).capacity).toBe(18);
  });

  it('before the first sample, the backlog is what this producer sent; a kept capacity that cannot be read is none', async () => {
    const q = queue();
    q.estimate.sent(3);
    expect(q.estimate.view(0)).toEqual({ backlog: 3, capacity: undefined, basis: 'none', held: 0 });
    const failing = new QueueEstimate(
      {
        counts: async () => ({ visible: 1, inFlight: 0, delayed: 0 }),
        drained: async () => 0,
        held: async () => undefined,
        kept: () => Promise.reject(new Error('ECONNRESET')),
        keep: async () => {},
      },
      URL,
      5_000,
    );
    await failing.sample(() => 0);
    expect(failing.view(0)).toEqual({ backlog: 1, capacity: undefined, basis: 'none', held: 0 });
  });

  it('what the workers report holding is bounded by what SQS counts in flight now: a fleet run dry holds nothing, and did not have work', async () => {
    const q = queue();
    q.state.backlog = 0;
    q.state.drained = 0;
    const t = 10 * HELD_PERIOD_MS + 500;
    q.state.held.set(9, 8); // reported in the last period, read for up to two
    q.state.inFlight = 3; // three still received: at most three held
    await q.at(t);
    expect(q.estimate.view(t)).toMatchObject({ backlog: 3, held: 3 });
    q.state.inFlight = 0; // the fleet ran dry: its last report is stale
    for (let s = 1; s <= 5; s++) {
      q.state.drained += 10;
      await q.at(t + s * 1_000);
    }
    // Not busy while it held nothing and nothing was visible: what it drained is a floor, not a measure.
    expect(q.estimate.view(t + 5_000)).toMatchObject({ backlog: 0, held: 0, capacity: 10, basis: 'drained' });
  });

  it('counts what it admitted from the moment it did, not from when SQS answers the send; a send that failed counts no more', async () => {
    const q = queue();
    q.state.backlog = 5;
    await q.at(0);
    q.estimate.sending(10); // ten sends out at once
    expect(q.estimate.view(0).backlog).toBe(15);
    q.estimate.sent(7, 2); // seven went, two failed, one still out
    expect(q.estimate.view(0).backlog).toBe(13);
    q.estimate.sent(0, 1);
    expect(q.estimate.view(0).backlog).toBe(12);
  });

  it('a held count that cannot be read, or is not a count, is taken as none: the sample stands', async () => {
    const bad = [Promise.reject(new Error('ECONNRESET')), Promise.resolve(Number.NaN), Promise.resolve(-4), Promise.resolve(2.5)];
    for (const answer of bad) {
      answer.catch(() => {});
      const estimate = new QueueEstimate(
        {
          counts: async () => ({ visible: 40, inFlight: 0, delayed: 2 }),
          drained: async () => 7,
          held: () => answer,
          kept: async () => undefined,
          keep: async () => {},
        },
        URL,
        5_000,
      );
      await estimate.sample(() => 0);
      expect(estimate.view(0)).toEqual({ backlog: 42, capacity: undefined, basis: 'none', held: 0 });
    }
  });
});

describe('AdmissionGate', () => {
  const gate = (maxRetryAfterMs = 3_600_000) =>
    new AdmissionGate({ slaSeconds: 10, graceMs: 2_000, headroom: 0.1, firstMark: 10, maxRetryAfterMs });
  const refusal = (f: () => void): QueueFullError => {
    try {
      f();
    } catch (error) {
      if (error instanceof QueueFullError) return error;
      throw error;
    }
    throw new Error('admitted');
  };

  it('admits new requests up to 90% of the mark (capacity × SLA): the rest is kept for returning ones', () => {
    const g = gate();
    g.admit('a', 1, { backlog: 179, capacity: 20, basis: 'measured', held: 0 }, 0);
    refusal(() => g.admit('b', 1, { backlog: 180, capacity: 20, basis: 'measured', held: 0 }, 0));
  });

  it('before the capacity is measured: up to the first mark with none known, else the kept or drained capacity × SLA if larger; told to come back in a second', () => {
    const g = gate();
    g.admit('a', 1, { backlog: 8, capacity: undefined, basis: 'none', held: 0 }, 0); // 9 <= 90% of the first mark (10)
    // Beyond what the workers hold (their prefetch, taken whatever the load): 10 more may wait in the queue.
    expect(gate().markOf({ backlog: 0, capacity: undefined, basis: 'none', held: 20 })).toBe(30);
    const e = refusal(() => g.admit('b', 1, { backlog: 9, capacity: undefined, basis: 'none', held: 0 }, 0));
    expect(e).toMatchObject({ retryAfterMs: 1_000, highWaterMark: 10 });
    expect(g.held).toBe(0); // no turn: without a drain rate there is nothing to space turns by
    const k = gate();
    k.admit('c', 1, { backlog: 89, capacity: 10, basis: 'kept', held: 0 }, 0); // kept 10/s × 10 s: mark 100, fill 90
    refusal(() => k.admit('d', 1, { backlog: 90, capacity: 10, basis: 'kept', held: 0 }, 0));
    gate().admit('e', 1, { backlog: 8, capacity: 0.2, basis: 'drained', held: 0 }, 0); // 2 under the first mark: the first mark
    expect(g.markOf({ backlog: 0, capacity: 0.2, basis: 'drained', held: 0 })).toBe(10);
    expect(g.markOf({ backlog: 0, capacity: 0.2, basis: 'measured', held: 0 })).toBe(2); // measured: as it is
  });

  it('past the longest Retry-After: told that much and keeps no turn, so the line of turns stops growing', () => {
    const g = gate(30_000);
    // 600 over the fill line at 20/s: 30 s, told.
    expect(refusal(() => g.admit('a', 1, { backlog: 779, capacity: 20, basis: 'measured', held: 0 }, 0)).retryAfterMs).toBe(30_000);
    expect(g.held).toBe(1);
    // 31 s: told 30 s, no turn.
    expect(refusal(() => g.admit('b', 1, { backlog: 799, capacity: 20, basis: 'measured', held: 0 }, 0)).retryAfterMs).toBe(30_000);
    expect(g.held).toBe(1);
  });

  it('above the mark: refuses with the time until the backlog drains below it, in whole seconds', () => {
    const g = gate();
    // 71 over the fill line (180), drained at 20/s: 3.55 s, said as 4.
    const e = refusal(() => g.admit('a', 1, { backlog: 250, capacity: 20, basis: 'measured', held: 0 }, 0));
    expect(e).toMatchObject({ code: 'QUEUE_FULL', retryAfterMs: 4_000, backlog: 250, highWaterMark: 200, drainPerSecond: 20 });
    expect(e.message).toMatch(/250 jobs wait, its high-water mark is 200 \(20\.0 jobs\/s drained\); try again in 4 s/);
  });

  it('keeps a turn for a refused request: new ones queue behind it, and it is admitted when it comes back on time', () => {
    const g = gate();
    const view = { backlog: 180, capacity: 20, basis: 'measured' as const, held: 0 };
    expect(refusal(() => g.admit('a', 1, view, 0)).retryAfterMs).toBe(1_000);
    expect(refusal(() => g.admit('b', 1, view, 10)).retryAfterMs).toBe(1_000);
    expect(g.held).toBe(2);
    // Early: refused again, told the time left.
    expect(refusal(() => g.admit('a', 1, view, 500)).retryAfterMs).toBe(1_000);
    // A new request while turns are kept and the room is theirs: behind them.
    const behind = { backlog: 178, capacity: 20, basis: 'measured' as const, held: 0 };
    expect(refusal(() => g.admit('c', 1, behind, 900)).retryAfterMs).toBe(1_000);
    // On time: admitted into the headroom, up to half of it (95% of the mark) and never above it.
    g.admit('a', 1, { backlog: 185, capacity: 20, basis: 'measured', held: 0 }, 1_000);
    g.admit('b', 1, { backlog: 189, capacity: 20, basis: 'measured', held: 0 }, 1_020);
    expect(g.held).toBe(1);
    expect(refusal(() => g.admit('c', 1, { backlog: 190, capacity: 20, basis: 'measured', held: 0 }, 1_100)).highWaterMark).toBe(200);
  });

  it('a turn not claimed within the grace is dropped; a returning request far over the mark is refused again', () => {
    const g = gate();
    refusal(() => g.admit('a', 1, { backlog: 180, capacity: 20, basis: 'measured', held: 0 }, 0));
    g.admit('z', 1, { backlog: 0, capacity: 20, basis: 'measured', held: 0 }, 3_001); // expires a's turn on the way
    expect(g.held).toBe(0);
    refusal(() => g.admit('b', 1, { backlog: 180, capacity: 20, basis: 'measured', held: 0 }, 4_000));
    // Back on time but over the mark (the workers slowed): refused again, 81 over the fill line: 5 s.
    expect(refusal(() => g.admit('b', 1, { backlog: 260, capacity: 20, basis: 'measured', held: 0 }, 5_000)).retryAfterMs).toBe(5_000);
  });

  it('turns due later do not block new requests: the refusals spaced them at the drain rate; a turn not claimed leaves a hole new ones fill', () => {
    const g = gate();
    // 100 refused at once, at the fill line (180): their turns are spaced 1/20 s apart, over 5 s.
    for (let i = 0; i < 100; i++) refusal(() => g.admit(`r${i}`, 1, { backlog: 180, capacity: 20, basis: 'measured', held: 0 }, 0));
    expect(g.held).toBe(100);
    // Retry-After is in whole seconds: 20 are due at 1 s, 20 at 2 s, … 20 at 5 s. Only those due within the next second
    // hold room now: a new request fits beside them (150 + 20 + 1 <= 180), though all 100 kept would not.
    g.admit('new', 1, { backlog: 150, capacity: 20, basis: 'measured', held: 0 }, 100);
    // Not when the turns due within the second would not fit beside it.
    refusal(() => g.admit('new2', 1, { backlog: 165, capacity: 20, basis: 'measured', held: 0 }, 100));
  });

  it('keeps turns by due time: a later refusal due sooner (the backlog drained meanwhile) still holds room when due', () => {
    const g = gate();
    refusal(() => g.admit('early', 1, { backlog: 229, capacity: 20, basis: 'measured', held: 0 }, 0)); // 50 over the line: due at 3 s
    expect(refusal(() => g.admit('later', 1, { backlog: 198, capacity: 20, basis: 'measured', held: 0 }, 600)).retryAfterMs).toBe(1_000); // due at 1.6 s
    // At 1 s the turn due at 1.6 s is pressing, though a turn given before it is due later: 179 + 1 + 1 > 180.
    refusal(() => g.admit('new', 1, { backlog: 179, capacity: 20, basis: 'measured', held: 0 }, 1_000));
    g.admit('later', 1, { backlog: 178, capacity: 20, basis: 'measured', held: 0 }, 1_600);
    // Past its grace a turn is dropped, wherever it is in the order.
    g.prune(5_001);
    expect(g.held).toBe(0);
  });

  it('a drain capacity of 0 (workers stopped with work left) refuses for a minute', () => {
    expect(refusal(() => gate().admit('a', 1, { backlog: 10, capacity: 0, basis: 'measured', held: 0 }, 0)).retryAfterMs).toBe(60_000);
  });
});

describe('admissionKey', () => {
  it('is the job id when given, else the same for the same job, tenant and args', () => {
    expect(admissionKey('email', { to: 'a' }, undefined, 'order-1')).toBe('id:order-1');
    expect(admissionKey('email', { to: 'a' }, 't1', undefined)).toBe(admissionKey('email', { to: 'a' }, 't1', undefined));
    expect(admissionKey('email', { to: 'a' }, 't1', undefined)).not.toBe(admissionKey('email', { to: 'a' }, 't2', undefined));
    expect(admissionKey('email', { to: 'a' }, undefined, undefined)).not.toBe(admissionKey('email', { to: 'b' }, undefined, undefined));
  });
});

describe('a producer with admission', () => {
  const email = defineJob({ name: 'email', args: z.object({ to: z.string() }), handle: () => {} });

  it('admits until the estimate says the backlog is at the mark, then throws QueueFullError and sends nothing', async () => {
    const memory = new MemoryQueue();
    const queueUrl = memory.create('jobs');
    const drains = new MemoryDrainMeter();
    await drains.add(queueUrl, 1);
    let stop = () => {};
    const producer = createProducer(
      { queueUrl, queue: memory, admission: { slaSeconds: 2, sampleMs: 250, windowSeconds: 1, drains, counts: (u) => memory.counts(u) } },
      {},
    );
    try {
      await producer.enqueue(email, { to: 'first' }); // no estimate yet: admitted, and sampling starts
      // Workers that drain 8/s while work waits (the queue keeps its messages: only the count matters here): the mark is 16.
      const workers = setInterval(() => void drains.add(queueUrl, 2), 250);
      stop = () => clearInterval(workers);
      const startedAt = Date.now();
      await new Promise((r) => setTimeout(r, 1_600));
      const sent = [];
      let refused: unknown;
      // One every 20 ms until refused: the capacity is measured once a window has passed with work waiting.
      for (let i = 0; i < 500 && refused === undefined; i++) {
        try {
          sent.push(await producer.enqueue(email, { to: `u${i}` }));
          await new Promise((r) => setTimeout(r, 20));
        } catch (error) {
          refused = error;
        }
      }
      expect(refused).toBeInstanceOf(QueueFullError);
      // The rate the timers really added at (a loaded host fires them late) × the SLA, give or take a tick.
      const rate = (((await drains.read(queueUrl)) ?? 0) - 1) / ((Date.now() - startedAt) / 1000);
      expect((refused as QueueFullError).highWaterMark).toBeGreaterThanOrEqual(Math.floor(rate * 2 * 0.6));
      expect((refused as QueueFullError).highWaterMark).toBeLessThanOrEqual(Math.ceil(rate * 2 * 1.4));
      // Nothing drains this queue for real, so the backlog is all that was sent; refused at 85% of the mark (the rest is kept for returning requests).
      expect((await memory.counts(queueUrl)).visible).toBe(sent.length + 1);
      expect((refused as QueueFullError).backlog + 1).toBeGreaterThanOrEqual(0.85 * (refused as QueueFullError).highWaterMark);
      // All or none: a batch that does not fit sends nothing.
      await expect(producer.enqueueMany(email, [{ to: 'x' }, { to: 'y' }])).rejects.toBeInstanceOf(QueueFullError);
      expect((await memory.counts(queueUrl)).visible).toBe(sent.length + 1);
    } finally {
      stop();
      producer.close();
    }
  });

  it('names what it needs: the drain counts (memcached) and, with a queue port of your own, the counts', () => {
    const memory = new MemoryQueue();
    const queueUrl = memory.create('jobs');
    expect(() => createProducer({ queueUrl, queue: memory, admission: { slaSeconds: 5 } }, {})).toThrow(/options\.admission\.counts/);
    expect(() => createProducer({ queueUrl, admission: { slaSeconds: 5 } }, { AWS_REGION: 'us-east-1' })).toThrow(
      /options\.admission: needs the workers' drain counts: set memcached \(or SQS_JOBS_MEMCACHED\)/,
    );
    expect(() => createProducer({ queueUrl, queue: memory, admission: { slaSeconds: 0 } }, {})).toThrow(
      /admission\.slaSeconds: must be > 0/,
    );
    expect(() => createProducer({ queueUrl, queue: memory, lock: new MemoryLock(), memcached: '127.0.0.1:11211' }, {})).toThrow(
      /options\.lock: give either lock or memcached, not both/,
    );
  });
});

describe('QueueEstimate before the workers count', () => {
  it('samples without a drain count are dropped once counts come, and measure nothing', async () => {
    const q = queue();
    q.state.backlog = 50;
    for (let s = 0; s <= 3; s++) await q.at(s * 1_000); // no worker has counted yet
    q.state.drained = 0;
    for (let s = 4; s <= 7; s++) {
      await q.at(s * 1_000);
      q.state.drained += 10;
    }
    expect(q.estimate.view(7_000)?.capacity).toBe(10);
  });
});
