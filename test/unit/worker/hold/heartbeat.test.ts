import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { NoLock, type JobLock } from '../../../../src/ports/lock.js';
import type { QueuePort } from '../../../../src/ports/queue.js';
import { Heartbeat } from '../../../../src/worker/hold/heartbeat.js';
import { FakeQueuePort, message } from '../../../helpers/fake-queue-port.js';

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

function heartbeat(sqs: QueuePort, options: Partial<ConstructorParameters<typeof Heartbeat>[0]> = {}) {
  const errors: unknown[] = [];
  const lost: string[] = [];
  const hb = new Heartbeat({
    sqs,
    lock: new NoLock(),
    visibilityTimeoutSeconds: 10,
    intervalMs: 5_000,
    lockTtlSeconds: 15,
    onError: (e) => errors.push(e),
    onLost: (lease, reason) => lost.push(`${lease.message.messageId}: ${reason}`),
    ...options,
  });
  return { hb, errors, lost };
}

/** A lock whose other calls all succeed, and whose extensions answer as `extend` says. */
function lockExtending(extend: JobLock['extend']): JobLock {
  return {
    claim: async () => 'claimed',
    complete: async () => true,
    release: async () => true,
    markDeadLettered: async () => true,
    close: () => {},
    extend,
  };
}

describe('Heartbeat', () => {
  it('extends all due messages together, 10 per call, at half the visibility timeout', async () => {
    const sqs = new FakeQueuePort();
    const { hb } = heartbeat(sqs);
    for (let i = 0; i < 25; i++) hb.hold(message(i));
    hb.start();
    await vi.advanceTimersByTimeAsync(3_000);
    expect(sqs.visibilityCalls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000); // due at 5 s; the tick before it (4 s) takes them
    expect(sqs.visibilityCalls.map((c) => c.entries.length)).toEqual([10, 10, 5]);
    expect(sqs.visibilityCalls.flatMap((c) => c.entries.map((e) => e.visibilityTimeout))).toEqual(Array(25).fill(10));
    await vi.advanceTimersByTimeAsync(4_000);
    expect(sqs.visibilityCalls).toHaveLength(6);
    await hb.close();
  });

  it('runs one timer however many messages it holds', async () => {
    const sqs = new FakeQueuePort();
    const { hb } = heartbeat(sqs);
    hb.start();
    hb.start();
    for (let i = 0; i < 100; i++) hb.hold(message(i));
    expect(vi.getTimerCount()).toBe(1);
    await hb.close();
    await hb.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stops extending an untracked message', async () => {
    const sqs = new FakeQueuePort();
    const { hb } = heartbeat(sqs);
    const lease = hb.hold(message(1));
    await hb.stopHolding(lease);
    hb.start();
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sqs.visibilityCalls).toHaveLength(0);
    await hb.close();
  });

  it('reports a lost lease when SQS says the receipt handle is invalid, and drops it', async () => {
    const sqs = new FakeQueuePort();
    sqs.visibilityAnswer = (e) =>
      e.receiptHandle === 'rh2' ? { code: 'ReceiptHandleIsInvalid', message: 'expired', senderFault: true } : undefined;
    const { hb, lost } = heartbeat(sqs);
    const leases = [1, 2, 3].map((i) => hb.hold(message(i)));
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lost).toEqual(['m2: SQS refused the extension: ReceiptHandleIsInvalid expired']);
    expect(leases.map((l) => l.lost)).toEqual([false, true, false]);
    expect((leases[1]!.signal.reason as { code?: string }).code).toBe('LEASE_LOST'); // the handler's signal fired
    expect(hb.size).toBe(2);
    await hb.close();
  });

  it('retries after a failed call, and declares the lease lost once its visibility has run out', async () => {
    const sqs = new FakeQueuePort();
    sqs.visibilityAnswer = () => 'throw';
    const { hb, errors, lost } = heartbeat(sqs);
    hb.hold(message(1));
    hb.start();
    await vi.advanceTimersByTimeAsync(6_000);
    const callsAfterFirstFailure = sqs.visibilityCalls.length;
    expect(callsAfterFirstFailure).toBeGreaterThanOrEqual(2); // tried again on the next ticks
    expect(errors.length).toBe(callsAfterFirstFailure);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(4_500); // past the 10 s visibility
    expect(lost[0]).toMatch(/visibility timeout passed/);
    await hb.close();
  });

  it('extends a due lease after a transient failure as soon as SQS answers again', async () => {
    const sqs = new FakeQueuePort();
    let failing = true;
    sqs.visibilityAnswer = () => (failing ? 'throw' : undefined);
    const { hb } = heartbeat(sqs);
    const lease = hb.hold(message(1));
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000);
    failing = false;
    await vi.advanceTimersByTimeAsync(1_000); // the tick at 6 s succeeds
    expect(lease.lost).toBe(false);
    expect(lease.visibleAt).toBe(Date.now() + 10_000);
    expect(lease.nextExtendAt).toBe(Date.now() + 5_000);
    await hb.close();
  });

  it('never asks past the hold limit, and stops the handler before reaching it', async () => {
    const sqs = new FakeQueuePort();
    const { hb } = heartbeat(sqs, { maxHoldMs: 22_000 });
    const lease = hb.hold(message(1));
    hb.start();
    await vi.advanceTimersByTimeAsync(30_000);
    const asked = sqs.visibilityCalls.map((c) => c.entries[0]!.visibilityTimeout);
    // ticks every 1 s; due at 5 s, 9 s, 13 s, 17 s (taken one tick early):
    // at 4 s 18 s are left → 10; at 8 s 14 s left → 10; at 12 s 10 s left → 9; at 16 s only 6 s left → stop
    expect(asked).toEqual([10, 10, 9]);
    expect((lease.signal.reason as { code?: string }).code).toBe('JOB_TIMEOUT'); // the handler is stopped
    // Not extended after that: once its visibility runs out it is lost, even though its signal had already fired.
    expect(lease.lost).toBe(true);
    for (const c of sqs.visibilityCalls) expect(c.entries[0]!.visibilityTimeout).toBeLessThan(22);
    await hb.close();
  });

  it('untrack() waits for an extension already in flight, and a settled lease is never reported lost', async () => {
    const sqs = new FakeQueuePort();
    let answer: (() => void) | undefined;
    sqs.changeVisibilityBatch = async (queueUrl, entries) => {
      sqs.visibilityCalls.push({ queueUrl, entries: [...entries] });
      await new Promise<void>((resolve) => (answer = resolve));
      return [{ id: '0', code: 'ReceiptHandleIsInvalid', message: 'deleted meanwhile', kind: 'lease-lost' as const }];
    };
    const { hb, lost } = heartbeat(sqs);
    const lease = hb.hold(message(1));
    const tick = hb.tick(Date.now() + 5_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(sqs.visibilityCalls).toHaveLength(1); // extension in flight
    let released = false;
    const release = hb.stopHolding(lease).then(() => (released = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(released).toBe(false); // settle must not act before the extension lands
    answer!();
    await Promise.all([tick, release]);
    expect(released).toBe(true);
    expect(lost).toEqual([]);
    expect(lease.lost).toBe(false);
  });

  it('declares the lease lost when the dedupe lock is held by someone else', async () => {
    const sqs = new FakeQueuePort();
    const lock: JobLock = {
      ...new NoLock(),
      extend: async () => 'lost',
      claim: async () => 'claimed',
      complete: async () => true,
      release: async () => true,
      markDeadLettered: async () => true,
      close: () => {},
    };
    const { hb, lost } = heartbeat(sqs, { lock });
    const lease = hb.hold(message(1));
    lease.hold({ lock: { jobId: 'j1', token: 't' } });
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lost[0]).toMatch(/dedupe lock is held by another consumer/);
    await hb.close();
  });
  it("fires the handler's signal with CANCELLED within one interval of a cancel, and keeps holding the message", async () => {
    const sqs = new FakeQueuePort();
    let cancelled = false;
    const { hb, lost } = heartbeat(sqs, { lock: lockExtending(async () => (cancelled ? 'cancelled' : 'held')) });
    const lease = hb.hold(message(1));
    lease.hold({ lock: { jobId: 'j1', token: 't' } });
    hb.start();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lease.signal.aborted).toBe(false);
    cancelled = true;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toMatchObject({ code: 'CANCELLED', message: 'job j1 was cancelled' });
    // Not lost: this worker still holds the message (to delete it as cancelled), so it keeps extending it.
    expect(lease.lost).toBe(false);
    expect(lost).toEqual([]);
    const extended = sqs.visibilityCalls.length;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sqs.visibilityCalls.length).toBe(extended + 1);
    await hb.close();
  });

  it('keeps extending visibility while a slow lock extension is in flight, and settle still waits for it', async () => {
    const sqs = new FakeQueuePort();
    const extends_: number[] = [];
    let landed = 0;
    // memcached that answers, but only after 20 s: longer than the 10 s visibility timeout
    const lock = lockExtending(async () => {
      extends_.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      landed++;
      return 'held';
    });
    const { hb, lost } = heartbeat(sqs, { lock });
    const start = Date.now();
    const lease = hb.hold(message(1));
    lease.hold({ lock: { jobId: 'j1', token: 't' } });
    hb.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(lost).toEqual([]);
    expect(lease.lost).toBe(false);
    // Visibility extended every 5 s all along; the lock asked again only once the first answer came.
    expect(sqs.visibilityCalls.length).toBeGreaterThanOrEqual(5);
    const asked = extends_.map((t) => t - start);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toBe(4_000);
    expect(asked[1]).toBeGreaterThanOrEqual(24_000); // not before the first answer (at 24 s)
    expect(asked[1]).toBeLessThanOrEqual(29_000); // and at the next extension after it
    // Settle waits for the lock extension in flight (a touch landing after its done mark would cut the mark's life).
    let released = false;
    const release = hb.stopHolding(lease).then(() => (released = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(released).toBe(false);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(released).toBe(true);
    expect(landed).toBe(2);
    await release;
    await hb.close();
  });
  it("one lease's slow lock extension never holds up another lease's", async () => {
    const sqs = new FakeQueuePort();
    const asked: Record<string, number> = {};
    // j-slow's memcached answers after 60 s; j-fast's at once
    const lock = lockExtending(async (jobId) => {
      asked[jobId] = (asked[jobId] ?? 0) + 1;
      if (jobId === 'j-slow') await new Promise((resolve) => setTimeout(resolve, 60_000));
      return 'held';
    });
    const { hb, lost } = heartbeat(sqs, { lock });
    const slow = hb.hold(message(1));
    slow.hold({ lock: { jobId: 'j-slow', token: 't1' } });
    const fast = hb.hold(message(2));
    fast.hold({ lock: { jobId: 'j-fast', token: 't2' } });
    hb.start();
    await vi.advanceTimersByTimeAsync(40_000);
    expect(lost).toEqual([]);
    expect(asked['j-slow']).toBe(1);
    expect(asked['j-fast']).toBeGreaterThanOrEqual(7); // every 5 s, as if the other were not there
    let fastLetGo = false;
    const letGoFast = hb.stopHolding(fast).then(() => (fastLetGo = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(fastLetGo).toBe(true); // nothing of the slow lease's is waited for
    await letGoFast;
    const letGoSlow = hb.stopHolding(slow);
    await vi.advanceTimersByTimeAsync(30_000);
    await letGoSlow;
    await hb.close();
  });
});
