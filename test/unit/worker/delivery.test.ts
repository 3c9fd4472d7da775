import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../../src/core/errors.js';
import { defineJob, type JobContext } from '../../../src/core/job.js';
import { ATTR_UNFINISHED_RUNS } from '../../../src/core/delivery.js';
import { encodeEnvelope } from '../../../src/core/envelope.js';
import { noRoom } from '../../../src/worker/turns/turn.js';
import { readOnce } from '../../../src/worker/run/read.js';
import { MemoryRateLimits } from '../../../src/testing/memory-rate-limits.js';
import { type InMemoryWorker, inMemoryWorker, runToEnd } from '../../helpers/worker-context.js';

/*
 * A delivery: one message from read to outcome (claim the job id, take the tenant's permit, run the
 * handler under the lease's signal, decide), on the in-memory queue, lock and permits.
 */

const seen: JobContext[] = [];
const step = defineJob({
  name: 'step',
  args: z.object({ n: z.number() }),
  backoff: { baseMs: 2_000, factor: 1, capMs: 2_000, jitter: 0 },
  handle: ({ n }, ctx) => {
    seen.push(ctx);
    if (n < 0) throw new UnrecoverableError('negative');
    if (n === 0) throw new Error('zero');
    return n * 2;
  },
});

let w: InMemoryWorker;
afterEach(async () => {
  seen.length = 0;
  await w.close();
});

async function run(o: { stopping?: boolean } = {}) {
  const lease = await w.receive();
  if (o.stopping) w.ctx.stop.abort();
  return { lease, ...(await runToEnd(w.ctx, lease, readOnce(w.ctx.config.jobs, lease))) };
}

describe('a delivery', () => {
  it('claims the job id, runs the handler with its context, and decides success with the result', async () => {
    w = await inMemoryWorker([step]);
    const id = await w.send('step', { n: 21 }, { tenant: 'acme' });
    const { outcome, info, lease } = await run();
    expect(outcome).toMatchObject({ kind: 'succeeded', result: 42 });
    expect(info).toMatchObject({ jobId: id, jobName: 'step', attempt: 1, tenant: 'acme' });
    expect(seen[0]).toMatchObject({ jobId: id, jobName: 'step', attempt: 1, tenant: 'acme', queueUrl: w.url });
    expect(lease.lock?.jobId).toBe(id); // held until settle ends it
    expect(await w.lock.claim(id, 'other', 60, { messageId: 'another', receiveCount: 1 })).toBe('running-copy');
    expect(w.events).toEqual(['job:start']);
  });

  it('decides poison without claiming or running: invalid args name the field', async () => {
    w = await inMemoryWorker([step]);
    const id = await w.send('step', { n: 'one' });
    const { outcome } = await run();
    expect(outcome).toMatchObject({ kind: 'dead-letter', reason: 'invalid-args', detail: expect.stringContaining('args.n') });
    expect(seen).toEqual([]);
    expect(await w.lock.claim(id, 'other', 60)).toBe('claimed');
  });

  it('an unknown job is poison, named in the detail, its events saying "unknown"', async () => {
    w = await inMemoryWorker([step]);
    await w.send('resize', {});
    const { outcome, info } = await run();
    expect(outcome).toMatchObject({ kind: 'dead-letter', reason: 'unknown-job', detail: expect.stringContaining('"resize"') });
    expect(info.jobName).toBe('unknown');
  });

  it('a completed job id is a duplicate: never run', async () => {
    w = await inMemoryWorker([step]);
    const id = await w.send('step', { n: 1 });
    await w.lock.complete(id, 'earlier', 60);
    const { outcome } = await run();
    expect(outcome).toEqual({ kind: 'duplicate', state: 'completed' });
    expect(seen).toEqual([]);
  });

  it('a job whose tenant holds every permit is deferred: never run, the lock released at settle', async () => {
    w = await inMemoryWorker([step], { options: { tenantCaps: { acme: 1 }, capDelaySeconds: 7 } });
    await w.permits.take('acme', 1, 'someone-else', 60);
    await w.send('step', { n: 1 }, { tenant: 'acme' });
    const { outcome } = await run();
    expect(outcome).toEqual({ kind: 'defer', reason: 'tenant "acme" has 1 job(s) running, its cap', delaySeconds: 7, limit: 'tenant-cap' });
    expect(seen).toEqual([]);
  });

  it('a job under its cap holds a permit while it runs', async () => {
    w = await inMemoryWorker([step], { options: { tenantCaps: { acme: 1 } } });
    await w.send('step', { n: 1 }, { tenant: 'acme' });
    const { outcome, lease } = await run();
    expect(outcome.kind).toBe('succeeded');
    expect(lease.permit).toMatchObject({ key: 'acme', index: 0 });
    expect(await w.permits.take('acme', 1, 'another', 60)).toBe('full');
  });

  it('hands back, unrun, a job claimed after the worker began stopping', async () => {
    w = await inMemoryWorker([step]);
    await w.send('step', { n: 1 });
    const { outcome } = await run({ stopping: true });
    expect(outcome).toEqual({ kind: 'hand-back', reason: 'worker is stopping', delaySeconds: 0, abandoned: false });
    expect(seen).toEqual([]);
  });

  it('a handler that throws is retried after its backoff; an UnrecoverableError is dead-lettered', async () => {
    w = await inMemoryWorker([step]);
    await w.send('step', { n: 0 });
    await w.send('step', { n: -1 });
    const first = await run();
    const second = await run();
    const outcomes = [first.outcome, second.outcome].sort((a, b) => a.kind.localeCompare(b.kind));
    expect(outcomes).toMatchObject([
      { kind: 'dead-letter', reason: 'unrecoverable', detail: 'negative' },
      { kind: 'retry', delayMs: 2_000 },
    ]);
  });

  it('on the receive that reaches maxReceiveCount, a failure is dead-lettered as retries-exhausted', async () => {
    w = await inMemoryWorker([step], { maxReceiveCount: 1 });
    await w.send('step', { n: 0 });
    const { outcome } = await run();
    expect(outcome).toMatchObject({ kind: 'dead-letter', reason: 'retries-exhausted', detail: 'failed on attempt 1 of 1: Error: zero' });
  });

  it('a message back while a killed run still holds its job id: not run, re-sent with that run counted once (the lock names it)', async () => {
    w = await inMemoryWorker([step], { maxReceiveCount: 3 });
    const id = await w.send('step', { n: 1 });
    const messageId = w.memory.peek(w.url)[0]!.messageId;
    await w.lock.claim(id, 'dead-run', 60, { messageId, receiveCount: 1 }); // the killed worker's claim, not lapsed yet
    const { outcome } = await run();
    expect(outcome).toMatchObject({ kind: 'hand-back', notAnAttempt: true, unfinishedRuns: { runs: 1, last: 'dead-run' } });
    expect(seen).toHaveLength(0);
  });

  it('a copy carrying maxReceiveCount unfinished runs: dead-lettered with the reason once its job id is claimed, never run', async () => {
    w = await inMemoryWorker([step], { maxReceiveCount: 3 });
    const envelope = { v: 1 as const, id: 'job-killer', job: 'step', args: { n: 1 }, enqueuedAt: new Date().toISOString() };
    await w.memory.send(w.url, {
      body: encodeEnvelope(envelope),
      attributes: { [ATTR_UNFINISHED_RUNS]: { DataType: 'String', StringValue: '3 run-3' } },
    });
    const { outcome } = await run();
    expect(outcome).toMatchObject({ kind: 'dead-letter', reason: 'retries-exhausted' });
    expect(seen).toHaveLength(0);
  });

  it('a job at its rate limit waits here for its slot when the room admits it, else is deferred to about then', async () => {
    const limited = defineJob({ name: 'limited', args: z.object({}), rateLimit: { perSecond: 0.01 }, handle: () => {} });
    const rates = new MemoryRateLimits();
    w = await inMemoryWorker([limited], { options: { rateLimits: rates } });
    // Starts taken elsewhere in the fleet: the next free slot is at least 100 s away.
    for (let i = 0; i < 2; i++) await rates.reserve('limited', limited.rateLimit!, Date.now());
    await w.send('limited', {});
    await w.send('limited', {});
    const room = { ...noRoom(), admits: () => true };
    const kept = await w.receive();
    const waits = await runToEnd(w.ctx, kept, readOnce(w.ctx.config.jobs, kept), room);
    expect(waits.outcome).toMatchObject({ kind: 'wait', limit: 'rate-limit', until: { at: expect.any(Number) } });
    expect(kept.rateSlotAt).toBe((waits.outcome as { until: { at: number } }).until.at); // the slot it reserved is its own
    const deferred = await run(); // no room: re-sent to come back at about its slot
    expect(deferred.outcome).toMatchObject({ kind: 'defer', limit: 'rate-limit' });
    expect((deferred.outcome as { delaySeconds: number }).delaySeconds).toBeGreaterThan(50);
    expect(seen).toEqual([]);
  });
});
