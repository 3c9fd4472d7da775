import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR_DLQ_REASON } from '../../../../src/core/dead-letter.js';
import { encodeEnvelope, newJobId } from '../../../../src/core/envelope.js';
import { SafeEmitter } from '../../../../src/core/events.js';
import { defineJob } from '../../../../src/core/job.js';
import type { JobInfo, WorkerEvents } from '../../../../src/core/job-events.js';
import type { WorkerContext } from '../../../../src/worker/context.js';
import { handBackNow, leaseLost, type Outcome, poisoned } from '../../../../src/worker/fate/decide.js';
import { ATTR_PRIOR_RECEIVES } from '../../../../src/core/delivery.js';
import { settle } from '../../../../src/worker/fate/settle.js';
import type { Lease } from '../../../../src/worker/hold/lease.js';
import { resolveWorkerConfig } from '../../../../src/worker/options.js';
import { queueState } from '../../../../src/worker/queue-state.js';
import { buildContext } from '../../../../src/worker/wiring.js';
import { MemoryLock } from '../../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../../src/testing/memory-queue.js';

/*
 * settle() carries out each Outcome on a queue and a lock (the in-memory fakes, which pass the same
 * contracts as SQS and memcached): what the queue and the lock hold afterwards is the check.
 */

const job = defineJob({ name: 'step', args: z.object({ n: z.number() }), handle: () => {} });
const error = new Error('boom');

interface Harness {
  readonly ctx: WorkerContext;
  readonly memory: MemoryQueue;
  readonly lock: MemoryLock;
  readonly url: string;
  readonly dlq: string;
  readonly events: string[];
  /** Receive the one message in the queue, held under the heartbeat, its job id claimed. */
  receive(): Promise<{ lease: Lease; info: JobInfo }>;
  /** Settle, then flush the batched deletes and hand-backs. */
  settle(lease: Lease, info: JobInfo, outcome: Outcome): Promise<void>;
}

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.ctx.heartbeat.close();
});

async function harness(maxReceiveCount = 3): Promise<Harness> {
  const memory = new MemoryQueue();
  const dlq = memory.create('jobs-dlq');
  const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount });
  const lock = new MemoryLock();
  const log = pino({ level: 'silent' });
  const c = resolveWorkerConfig(
    { queues: [url], jobs: [job], queue: memory, lock, deleteFlushMs: 0, handleSignals: false, logger: log, metrics: { sink: 'off' } },
    {},
  );
  const queues = c.queues.map(queueState);
  queues[0]!.deadLetterQueueUrl = dlq;
  queues[0]!.maxReceiveCount = maxReceiveCount;
  const events: string[] = [];
  const emitter = new SafeEmitter<WorkerEvents>(() => {});
  for (const e of [
    'job:succeeded',
    'job:duplicate',
    'job:failed',
    'job:handed-back',
    'job:resent',
    'job:deferred',
    'job:dead-lettered',
  ] as const)
    emitter.on(e, () => events.push(e));
  const ctx = buildContext(c, {}, log, emitter, queues, () => {});
  await memory.send(url, {
    body: encodeEnvelope({ v: 1, id: newJobId(), job: 'step', args: { n: 1 }, enqueuedAt: new Date().toISOString() }),
    attributes: {},
  });
  const h: Harness = {
    ctx,
    memory,
    lock,
    url,
    dlq,
    events,
    async receive() {
      const [m] = await memory.receive(url, 1, 0, 30);
      const lease = ctx.heartbeat.hold(m!);
      const jobId = JSON.parse(m!.body).id as string;
      expect(await lock.claim(jobId, 'token', 60, { messageId: m!.messageId, receiveCount: m!.receiveCount })).toBe('claimed');
      lease.hold({ lock: { jobId, token: 'token' } });
      const info = { jobId, jobName: 'step', messageId: m!.messageId, queueUrl: url, attempt: m!.receiveCount, tenant: undefined };
      return { lease, info };
    },
    async settle(lease, info, outcome) {
      await settle(ctx, lease, info, outcome);
      await ctx.deletes.flush();
      await ctx.visibility.flush();
    },
  };
  harnesses.push(h);
  return h;
}

/** What claiming the job id again answers (another receive of the same message, or a copy). */
const claimAgain = (h: Harness, info: JobInfo) => h.lock.claim(info.jobId, 'other', 60, { messageId: 'another', receiveCount: 1 });

describe('settle: each outcome, carried out', () => {
  it('succeeded: deleted, and the job id marked completed', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    expect(h.memory.peek(h.url)).toEqual([]);
    expect(await claimAgain(h, info)).toBe('completed');
    expect(h.events).toEqual(['job:succeeded']);
  });

  it('duplicate: deleted, the lock left as it was', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, { kind: 'duplicate', state: 'running' });
    expect(h.memory.peek(h.url)).toEqual([]);
    expect(h.events).toEqual(['job:duplicate']);
  });

  it('retry: visible again after its backoff, the job id free', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 20_000, processMs: 1, abandoned: false });
    const [m] = h.memory.peek(h.url);
    expect(m!.visibleInMs).toBeGreaterThan(15_000);
    expect(m!.visibleInMs).toBeLessThanOrEqual(20_000);
    expect(await claimAgain(h, info)).toBe('claimed');
    expect(h.events).toEqual(['job:failed']);
  });

  it('retry of an abandoned handler: its lock is kept until the TTL (it may still run)', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 1_000, processMs: 1, abandoned: true });
    expect(await claimAgain(h, info)).toBe('running-copy');
  });

  it('retry at the last receive: re-sent with the same body and the receives counted, the old message deleted', async () => {
    const h = await harness(1);
    const { lease, info } = await h.receive();
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
    const { lease, info } = await h.receive();
    await h.settle(lease, info, handBackNow('worker is stopping'));
    expect(h.memory.peek(h.url)).toMatchObject([{ messageId: info.messageId, visibleInMs: 0 }]);
    expect(h.events).toEqual(['job:handed-back']);
  });

  it('lost: the message is left alone (someone else holds it), the job id freed', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, leaseLost('the test said so'));
    expect(h.memory.peek(h.url)).toMatchObject([{ messageId: info.messageId }]);
    expect(h.memory.peek(h.url)[0]!.visibleInMs).toBeGreaterThan(25_000);
    expect(await claimAgain(h, info)).toBe('claimed');
    expect(h.events).toEqual([]);
  });

  it('defer: re-sent to run later, this receive not counted as an attempt', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, { kind: 'defer', reason: 'cap', delaySeconds: 7 });
    const left = h.memory.peek(h.url);
    expect(left).toHaveLength(1);
    expect(left[0]!.messageId).not.toBe(info.messageId);
    expect(left[0]!.visibleInMs).toBeGreaterThan(6_000);
    expect(left[0]!.attributes[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('0');
    expect(h.events).toEqual(['job:deferred']);
  });

  it('dead-letter: in the DLQ with the reason, deleted from the queue, the job id free for a replay', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    await h.settle(lease, info, poisoned('invalid-args', 'args.n: must be a number'));
    expect(h.memory.peek(h.url)).toEqual([]);
    const [dead] = h.memory.peek(h.dlq);
    expect(dead!.attributes[ATTR_DLQ_REASON]?.StringValue).toBe('invalid-args');
    expect(await claimAgain(h, info)).toBe('claimed');
    // The same message, were its delete lost and it came back, is a leftover.
    expect(await h.lock.claim(info.jobId, 'x', 60, { messageId: info.messageId, receiveCount: 2 })).toBe('dead-lettered');
    expect(h.events).toEqual(['job:dead-lettered']);
  });

  it('dead-letter whose DLQ send fails: stays in the queue, back after one visibility timeout', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
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
  });

  it('a lease lost before settle acts: a retry is left to the new holder, a success still deletes', async () => {
    const h = await harness();
    const { lease, info } = await h.receive();
    lease.abort('LEASE_LOST', 'the test lost it');
    await h.settle(lease, info, { kind: 'retry', error, delayMs: 0, processMs: 1, abandoned: false });
    expect(h.memory.peek(h.url)[0]!.visibleInMs).toBeGreaterThan(25_000); // not handed back
    expect(h.events).toEqual([]);
    const again = await harness();
    const second = await again.receive();
    second.lease.abort('LEASE_LOST', 'the test lost it');
    await again.settle(second.lease, second.info, { kind: 'succeeded', waitMs: 1, processMs: 1 });
    expect(again.memory.peek(again.url)).toEqual([]);
  });
});
