import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ATTR_DLQ_REASON } from '../../../../src/core/dead-letter.js';
import { ATTR_PRIOR_RECEIVES, ATTR_UNFINISHED_RUNS } from '../../../../src/core/delivery.js';
import { defineJob } from '../../../../src/core/job.js';
import type { JobInfo } from '../../../../src/core/job-events.js';
import { handedBackNow, leaseLost, type Outcome, poisoned } from '../../../../src/worker/decide/decide.js';
import { settle } from '../../../../src/worker/fate/settle.js';
import type { Lease } from '../../../../src/worker/hold/lease.js';
import { type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

/*
 * settle() carries out each Outcome on a queue and a lock (the in-memory fakes, which pass the same
 * contracts as SQS and memcached): what the queue and the lock hold afterwards is the check.
 */

const job = defineJob({ name: 'step', args: z.object({ n: z.number() }), handle: () => {} });
const error = new Error('boom');

interface Harness extends InMemoryWorker {
  /** Receive the one message in the queue, held under the heartbeat, its job id claimed. */
  receive(): Promise<Lease>;
  take(): Promise<{ lease: Lease; info: JobInfo }>;
  /** Settle, then flush the batched deletes and hand-backs. */
  settle(lease: Lease, info: JobInfo, outcome: Outcome): Promise<void>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function harness(maxReceiveCount = 3): Promise<Harness> {
  const w = await inMemoryWorker([job], { maxReceiveCount });
  await w.send('step', { n: 1 });
  const h: Harness = {
    ...w,
    async take() {
      const lease = await w.receive();
      const m = lease.message;
      const jobId = JSON.parse(m.body).id as string;
      expect(await w.lock.claim(jobId, 'token', 60, { messageId: m.messageId, receiveCount: m.receiveCount })).toBe('claimed');
      lease.hold({ lock: { jobId, token: 'token' } });
      const info = { jobId, jobName: 'step', messageId: m.messageId, queueUrl: w.url, attempt: m.receiveCount, tenant: undefined };
      return { lease, info };
    },
    async settle(lease, info, outcome) {
      await settle(w.ctx, w.acts, lease, info, outcome);
      await w.acts.deletes.flush();
      await w.acts.visibility.flush();
    },
  };
  harnesses.push(h);
  return h;
}

/** Back while a killed run (its second unfinished one) holds its job id: re-sent, this receive not counted. */
const HELD_HERE: Outcome = {
  kind: 'hand-back',
  reason: 'held here',
  delaySeconds: 9,
  abandoned: false,
  notAnAttempt: true,
  unfinishedRuns: { runs: 2, last: 'tok-2' },
};

/** What claiming the job id again answers (another receive of the same message, or a copy). */
const claimAgain = (h: Harness, info: JobInfo) => h.lock.claim(info.jobId, 'other', 60, { messageId: 'another', receiveCount: 1 });

describe('settle: each outcome, carried out', () => {
  it('succeeded: deleted, and the job id marked completed', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    expect(h.memory.peek(h.url)).toEqual([]);
    expect(await claimAgain(h, info)).toBe('completed');
    expect(h.events).toEqual(['job:succeeded']);
  });

  it('succeeded: the delete does not wait for the done mark; until it lands, a copy reads "running", never a job to run', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    const complete = h.ctx.lock.complete.bind(h.ctx.lock);
    let land: () => void = () => {};
    vi.spyOn(h.ctx.lock, 'complete').mockImplementation(
      (...args) => new Promise<boolean>((resolve) => (land = () => resolve(complete(...args)))),
    );
    const settled = settle(h.ctx, h.acts, lease, info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    await vi.waitFor(async () => {
      await h.acts.deletes.flush();
      expect(h.memory.peek(h.url)).toEqual([]);
    });
    expect(await claimAgain(h, info)).toBe('running-copy');
    land();
    await settled;
    expect(await claimAgain(h, info)).toBe('completed');
  });

  it('succeeded: a done mark that rejects (a lock breaking its contract) is reported, and the job still ends', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    vi.spyOn(h.ctx.lock, 'complete').mockRejectedValue(new Error('custom lock bug'));
    await h.settle(lease, info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    expect(h.memory.peek(h.url)).toEqual([]);
    expect(h.errors).toEqual(['lock complete']);
  });

  it('duplicate: deleted, the lock left as it was', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, { kind: 'duplicate', state: 'running' });
    expect(h.memory.peek(h.url)).toEqual([]);
    expect(h.events).toEqual(['job:duplicate']);
  });

  it('retry: visible again after its backoff, the job id free', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 20_000, processMs: 1, abandoned: false });
    const [m] = h.memory.peek(h.url);
    expect(m!.visibleInMs).toBeGreaterThan(15_000);
    expect(m!.visibleInMs).toBeLessThanOrEqual(20_000);
    expect(await claimAgain(h, info)).toBe('claimed');
    expect(h.events).toEqual(['job:failed']);
  });

  it('retry of an abandoned handler: its lock is kept until the TTL (it may still run)', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 1_000, processMs: 1, abandoned: true });
    expect(await claimAgain(h, info)).toBe('running-copy');
  });

  it('retry at the last receive: re-sent with the same body and the receives counted, the old message deleted', async () => {
    const h = await harness(1);
    const { lease, info } = await h.take();
    const body = h.memory.peek(h.url)[0]!.body;
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 0, processMs: 1, abandoned: false });
    const left = h.memory.peek(h.url);
    expect(left).toHaveLength(1);
    expect(left[0]!.messageId).not.toBe(info.messageId);
    expect(left[0]!.body).toBe(body);
    expect(left[0]!.receiveCount).toBe(0);
    expect(left[0]!.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('1');
    expect(h.events).toEqual(['job:failed', 'job:resent']);
  });

  it('hand back now: visible at once, without a re-send', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, handedBackNow('worker is stopping'));
    expect(h.memory.peek(h.url)).toMatchObject([{ messageId: info.messageId, visibleInMs: 0 }]);
    expect(h.events).toEqual(['job:handed-back']);
  });

  it('hand back, not an attempt: re-sent for after its delay, this receive not counted, the unfinished runs carried, the job id free', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, HELD_HERE);
    const left = h.memory.peek(h.url);
    expect(left).toHaveLength(1);
    expect(left[0]!.messageId).not.toBe(info.messageId);
    expect(left[0]!.visibleInMs).toBeGreaterThan(8_000);
    expect(left[0]!.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('0');
    expect(left[0]!.attributes[ATTR_UNFINISHED_RUNS]?.StringValue).toBe('2 tok-2');
    expect(await claimAgain(h, info)).toBe('claimed');
    expect(h.events).toEqual(['job:handed-back']);
  });

  it('hand back, not an attempt, the re-send refused on its last receive: re-sent counted, the unfinished runs still carried', async () => {
    const h = await harness(1);
    const { lease, info } = await h.take();
    // The uncounted re-send refused (a passing failure): settle hands it back, re-sending it counted.
    const resend = h.acts.resends.resend.bind(h.acts.resends);
    let refused = false;
    h.acts.resends.resend = async (m, copy) => {
      if (refused) return resend(m, copy);
      refused = true;
      return 'InternalError try again';
    };
    await h.settle(lease, info, HELD_HERE);
    const left = h.memory.peek(h.url);
    expect(left).toHaveLength(1);
    expect(left[0]!.messageId).not.toBe(info.messageId);
    expect(left[0]!.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('1');
    expect(left[0]!.attributes[ATTR_UNFINISHED_RUNS]?.StringValue).toBe('2 tok-2');
    expect(h.events).toEqual(['job:handed-back', 'job:resent']);
  });

  it('lost: the message is left alone (someone else holds it), the job id freed', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, leaseLost('the test said so'));
    expect(h.memory.peek(h.url)).toMatchObject([{ messageId: info.messageId }]);
    expect(h.memory.peek(h.url)[0]!.visibleInMs).toBeGreaterThan(25_000);
    expect(await claimAgain(h, info)).toBe('claimed');
    expect(h.events).toEqual([]);
  });

  it('defer: re-sent to run later, this receive not counted as an attempt', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, { kind: 'defer', reason: 'cap', delaySeconds: 7, limit: 'tenant-cap' });
    const left = h.memory.peek(h.url);
    expect(left).toHaveLength(1);
    expect(left[0]!.messageId).not.toBe(info.messageId);
    expect(left[0]!.visibleInMs).toBeGreaterThan(6_000);
    expect(left[0]!.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('0');
    expect(h.events).toEqual(['job:deferred']);
  });

  it('dead-letter: in the DLQ with the reason, deleted from the queue, the job id free for a replay', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    await h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    expect(h.memory.peek(h.url)).toEqual([]);
    const [dead] = h.memory.peek(h.dlq);
    expect(dead!.attributes[ATTR_DLQ_REASON]?.StringValue).toBe('invalid-args');
    expect(await claimAgain(h, info)).toBe('claimed');
    // The same message, were its delete lost and it came back, is a leftover.
    expect(await h.lock.claim(info.jobId, 'x', 60, { messageId: info.messageId, receiveCount: 2 })).toBe('dead-lettered');
    expect(h.events).toEqual(['job:dead-lettered']);
  });

  it('dead-letter: while the DLQ send is out, a copy of the same message is handed back, not run; a replay of the job runs', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    const send = h.memory.send.bind(h.memory);
    let land: (() => void) | undefined;
    h.memory.send = (queueUrl, message) =>
      queueUrl === h.dlq ? new Promise((resolve) => (land = () => resolve(send(queueUrl, message)))) : send(queueUrl, message);
    const settled = h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    await vi.waitFor(() => expect(land).toBeDefined()); // the DLQ send is out
    expect(await h.lock.claim(info.jobId, 'copy', 60, { messageId: info.messageId, receiveCount: 1 })).toBe('running');
    expect(await claimAgain(h, info)).toBe('claimed'); // another message of the job: a replay's copy
    land!();
    await settled;
    expect(h.memory.peek(h.dlq)).toHaveLength(1);
    expect(await h.lock.claim(info.jobId, 'x', 60, { messageId: 'a third', receiveCount: 1 })).toBe('running-copy'); // still the replay's
    expect(await h.lock.claim('fresh', 'x', 60, { messageId: info.messageId, receiveCount: 2 })).toBe('dead-lettered');
  });

  it('dead-letter whose mark cannot be written: the leaving claim is kept, so a copy of the message is still handed back', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    h.ctx.lock.markDeadLettered = async () => false;
    await h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    expect(h.memory.peek(h.dlq)).toHaveLength(1);
    expect(await h.lock.claim(info.jobId, 'copy', 60, { messageId: info.messageId, receiveCount: 2 })).toBe('running');
    expect(await claimAgain(h, info)).toBe('claimed'); // a replay's copy still runs
  });

  it('dead-letter with a lock that has no leave: the job id is released before the send, as before', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    const released: string[] = [];
    h.ctx.lock.leave = undefined;
    const release = h.ctx.lock.release.bind(h.ctx.lock);
    h.ctx.lock.release = (jobId, token) => {
      released.push(h.memory.peek(h.dlq).length === 0 ? 'before the send' : 'after');
      return release(jobId, token);
    };
    await h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    expect(released[0]).toBe('before the send');
    expect(await claimAgain(h, info)).toBe('claimed');
  });

  it('dead-letter whose DLQ send fails: stays in the queue, back after one visibility timeout', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    const send = h.memory.send.bind(h.memory);
    h.memory.send = async (queueUrl, message) => {
      if (queueUrl === h.dlq) throw new Error('the DLQ is gone');
      return send(queueUrl, message);
    };
    await h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    expect(h.memory.peek(h.dlq)).toEqual([]);
    const [m] = h.memory.peek(h.url);
    expect(m!.messageId).toBe(info.messageId);
    expect(m!.visibleInMs).toBeGreaterThan(25_000);
    expect(h.events).toEqual([]);
    // The job id freed, not left leaving: the same message runs when it comes back.
    expect(await h.lock.claim(info.jobId, 'again', 60, { messageId: info.messageId, receiveCount: 2 })).toBe('claimed');
  });

  it('a lease lost before settle acts: a retry is left to the new holder, a success still deletes', async () => {
    const h = await harness();
    const { lease, info } = await h.take();
    lease.abort('LEASE_LOST', 'the test lost it');
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 0, processMs: 1, abandoned: false });
    expect(h.memory.peek(h.url)[0]!.visibleInMs).toBeGreaterThan(25_000); // not handed back
    expect(h.events).toEqual([]);
    const again = await harness();
    const second = await again.take();
    second.lease.abort('LEASE_LOST', 'the test lost it');
    await again.settle(second.lease, second.info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    expect(again.memory.peek(again.url)).toEqual([]);
  });
});
