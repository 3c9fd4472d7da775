import { describe, expect, it } from 'vitest';
import { Lease } from '../../../../src/worker/hold/lease.js';
import { Scheduler, type ScheduledQueue } from '../../../../src/worker/intake/scheduler.js';

function lease(queueUrl: string, id: string, groupId?: string): Lease {
  return new Lease(
    { queueUrl, messageId: id, receiptHandle: id, body: '', receiveCount: 1, sentAt: 0, groupId, attributes: {} },
    0,
    30,
    15_000,
  );
}

const queue = (url: string, weight = 1, rank = 1): ScheduledQueue => ({ url, weight, rank, fifo: url.endsWith('.fifo') });
const ids = (leases: Lease[]) => leases.map((l) => l.message.messageId);

describe('Scheduler', () => {
  it('takes queues in proportion to their weights', () => {
    const s = new Scheduler([queue('a', 3), queue('b', 1)]);
    s.add(
      'a',
      Array.from({ length: 8 }, (_, i) => lease('a', `a${i}`)),
    );
    s.add(
      'b',
      Array.from({ length: 8 }, (_, i) => lease('b', `b${i}`)),
    );
    const order = Array.from({ length: 8 }, () => s.next()!.queue.url);
    expect(order.filter((u) => u === 'a')).toHaveLength(6);
    expect(s.size).toBe(8);
  });

  it('skips messages whose visibility ran out while they waited', () => {
    const s = new Scheduler([queue('a')]);
    const gone = lease('a', 'gone');
    gone.abort('LEASE_LOST', 'its visibility ran out');
    s.add('a', [gone, lease('a', 'ok')]);
    expect(s.next()?.lease.message.messageId).toBe('ok');
    expect(s.next()).toBeUndefined();
  });

  it('counts, per queue, the messages that start before one received now: not those lost or waiting for a permit', () => {
    const s = new Scheduler([queue('a'), queue('b')]);
    const gone = lease('a', 'gone');
    gone.abort('LEASE_LOST', 'its visibility ran out');
    s.add('a', [lease('a', 'parked')]);
    s.wait(s.next()!.lease, 'acme', Date.now() + 60_000); // its tenant is at its cap
    s.add('a', [gone, lease('a', 'a1'), lease('a', 'a2')]);
    s.add('b', [lease('b', 'b1')]);
    expect([s.aheadOf('a'), s.aheadOf('b'), s.bufferedOf('a')]).toEqual([2, 1, 4]);
  });

  it('on a FIFO queue starts one message per group, in order, and groups side by side', () => {
    const s = new Scheduler([queue('q.fifo')]);
    s.add('q.fifo', [lease('q.fifo', 'x1', 'x'), lease('q.fifo', 'x2', 'x'), lease('q.fifo', 'y1', 'y'), lease('q.fifo', 'x3', 'x')]);
    const first = s.next()!;
    const second = s.next()!;
    expect([first.lease.message.messageId, second.lease.message.messageId]).toEqual(['x1', 'y1']);
    expect(s.next()).toBeUndefined(); // x2 waits for x1
    expect(s.concluded(first.lease, false)).toEqual([]);
    expect(s.next()?.lease.message.messageId).toBe('x2');
  });

  it('hands back the rest of a FIFO group whose message comes back, and leaves other groups alone', () => {
    const s = new Scheduler([queue('q.fifo')]);
    s.add('q.fifo', [lease('q.fifo', 'x1', 'x'), lease('q.fifo', 'x2', 'x'), lease('q.fifo', 'y1', 'y'), lease('q.fifo', 'x3', 'x')]);
    const head = s.next()!;
    expect(ids(s.concluded(head.lease, true))).toEqual(['x2', 'x3']);
    expect(s.next()?.lease.message.messageId).toBe('y1');
    expect(s.size).toBe(0);
  });

  it('retries a failed FIFO message at the head of its group, and the group waits for it', () => {
    const s = new Scheduler([queue('q.fifo')]);
    s.add('q.fifo', [lease('q.fifo', 'x1', 'x'), lease('q.fifo', 'x2', 'x'), lease('q.fifo', 'y1', 'y')]);
    const head = s.next()!;
    s.retryLater(head.lease, 1_000, Date.now());
    expect(s.next()?.lease.message.messageId).toBe('y1'); // x1 not due yet, so x2 waits too
    expect(s.next()).toBeUndefined();
    head.lease.notBefore = 0; // due now
    expect(s.next()?.lease.message.messageId).toBe('x1');
    expect(s.next()).toBeUndefined(); // x2 still waits, for x1 to finish
  });

  it('sets aside the rest of a FIFO group whose buffered head was lost, to be handed back', () => {
    const s = new Scheduler([queue('q.fifo')]);
    const head = lease('q.fifo', 'x1', 'x');
    head.abort('LEASE_LOST', 'visibility ran out');
    s.add('q.fifo', [head, lease('q.fifo', 'x2', 'x'), lease('q.fifo', 'y1', 'y')]);
    expect(s.next()?.lease.message.messageId).toBe('y1');
    expect(ids(s.takeOrphans())).toEqual(['x2']);
    expect(s.takeOrphans()).toEqual([]);
  });

  it('never holds back a standard queue by group', () => {
    const s = new Scheduler([queue('std')]);
    s.add('std', [lease('std', 'a', 'tenant-1'), lease('std', 'b', 'tenant-1')]);
    const first = s.next()!;
    expect(s.next()?.lease.message.messageId).toBe('b');
    expect(s.concluded(first.lease, true)).toEqual([]);
    expect(ids(s.drain())).toEqual([]);
  });

  it('a message waiting for its tenant’s permit holds its place but lets the others start; a freed permit wakes the longest waiting', () => {
    const s = new Scheduler([queue('std')]);
    const later = (id: string, receivedAt: number) => {
      const l = lease('std', id);
      return new Lease(l.message, receivedAt, 30, 15_000);
    };
    const [a1, b1, a2] = [later('a1', 1), later('b1', 2), later('a2', 3)];
    s.add('std', [a1, b1]);
    s.wait(s.next()!.lease, 'acme', Date.now() + 60_000); // a1: acme is at its cap
    expect(s.next()?.lease).toBe(b1); // b1 starts past the waiting a1
    s.add('std', [a2]);
    expect(s.next()?.lease).toBe(a2);
    s.wait(a2, 'acme', Date.now() + 60_000);
    expect([s.waiting, s.size]).toEqual([2, 2]);
    expect(s.next()).toBeUndefined(); // both wait: nothing can start
    expect(s.permitFreed('other')).toBe(false);
    expect(s.permitFreed('acme')).toBe(true);
    const woken = s.next()!.lease;
    expect(woken).toBe(a1); // the one that waited longest
    expect(s.hasWaited(a1)).toBe(true);
    expect([s.waiting, s.size]).toEqual([1, 1]);
    expect(s.next()).toBeUndefined();
    a2.notBefore = Date.now() - 1; // its time to ask again has come
    expect(s.next()?.lease).toBe(a2);
  });
});
