import { describe, expect, it } from 'vitest';
import type { ReceivedMessage } from '../../../../src/core/message.js';
import { Lease } from '../../../../src/worker/hold/lease.js';

const message: ReceivedMessage = {
  queueUrl: 'http://memory.invalid/000000000000/jobs',
  messageId: 'm1',
  receiptHandle: 'h1',
  body: '{}',
  receiveCount: 1,
  sentAt: 0,
  groupId: undefined,
  attributes: {},
};

describe('Lease', () => {
  it('starts its hold at the visibility timeout, and its first extension one heartbeat in', () => {
    const lease = new Lease(message, 1_000, 30, 10_000);
    expect([lease.visibleAt, lease.nextExtendAt]).toEqual([31_000, 11_000]);
  });

  it('hands its claims to settle once: after endClaims the heartbeat sees none to extend', () => {
    const lease = new Lease(message, 0, 30, 10_000);
    lease.hold({ lock: { jobId: 'j', token: 't' } });
    lease.hold({ permit: { key: 'acme', index: 0, token: 't' } });
    expect(lease.endClaims()).toEqual({ lock: { jobId: 'j', token: 't' }, permit: { key: 'acme', index: 0, token: 't' } });
    expect([lease.lock, lease.permit]).toEqual([undefined, undefined]);
    expect(lease.endClaims()).toEqual({ lock: undefined, permit: undefined });
  });

  it('fires its signal once, with the first reason; a lost lease is lost even after another reason fired', () => {
    const lease = new Lease(message, 0, 30, 10_000);
    lease.abort('JOB_TIMEOUT', 'too slow');
    lease.abort('SHUTDOWN', 'stopping');
    expect(lease.signal.reason).toMatchObject({ code: 'JOB_TIMEOUT', message: 'too slow' });
    expect(lease.lost).toBe(false);
    lease.abort('LEASE_LOST', 'visibility ran out');
    expect(lease.lost).toBe(true);
    expect(lease.signal.reason).toMatchObject({ code: 'JOB_TIMEOUT' });
  });

  it('a FIFO retry in place runs under a fresh signal and reads its args afresh, unless the lease is lost', () => {
    const lease = new Lease(message, 0, 30, 10_000);
    lease.reading = { ok: false, reason: 'invalid-json', detail: 'x' } as never;
    lease.abort('JOB_TIMEOUT', 'too slow');
    lease.newRun();
    expect(lease.signal.aborted).toBe(false);
    expect(lease.reading).toBeUndefined();
    lease.abort('LEASE_LOST', 'gone');
    lease.newRun();
    expect(lease.signal.aborted).toBe(true);
  });
});
