import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { JobPausedError } from '../../../src/core/pause.js';
import { createJobsApi } from '../../../src/http/api.js';
import { Pauses } from '../../../src/ops/pauses.js';
import { createProducer } from '../../../src/producer/producer.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

/*
 * A producer while a job is paused: it accepts by default (the job waits in SQS for the resume);
 * with `whilePaused: 'refuse'` it throws JobPausedError (the HTTP API: 503 with Retry-After) and
 * sends nothing. The in-memory job store keeps pauses as DynamoDB's does (its contract test).
 */
const charge = defineJob({ name: 'charge-invoice', args: z.object({ invoice: z.string() }), handle: () => {} });

function setup(whilePaused?: 'accept' | 'refuse') {
  const queue = new MemoryQueue();
  const queueUrl = queue.create('paused');
  const store = new MemoryJobStore();
  const producer = createProducer({ queueUrl, queue, jobs: [charge], store, ...(whilePaused ? { whilePaused } : {}) }, {});
  const pauses = new Pauses({ controls: store.controls, notices: undefined, close: () => {} });
  const sent = async () => (await queue.receive(queueUrl, 10, 0, 0)).length;
  return { producer, pauses, sent };
}

describe("a producer while the job's queue, job type or tenant is paused", () => {
  it('accepts by default: the job waits in the queue for the resume', async () => {
    const { producer, pauses, sent } = setup();
    await pauses.pause({ job: 'charge-invoice' }, { by: 'ops' });
    await producer.enqueue(charge, { invoice: 'i-1' });
    expect(await sent()).toBe(1);
    producer.close();
  });

  it("with whilePaused 'refuse': JobPausedError naming what is paused and until when, nothing sent; the tenant's others go on", async () => {
    const { producer, pauses, sent } = setup('refuse');
    const until = Date.now() + 90_000;
    await pauses.pause({ job: 'charge-invoice', tenant: 'acme' }, { by: 'ops', reason: 'dispute', forSeconds: 90 });
    const refused = await producer.enqueue(charge, { invoice: 'i-1' }, { tenant: 'acme' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JobPausedError);
    const e = refused as JobPausedError;
    expect(e.code).toBe('JOB_PAUSED');
    expect(e.message).toMatch(
      /^job "charge-invoice" was not enqueued: job "charge-invoice" for tenant "acme" is paused until .* by ops \(dispute\)$/,
    );
    expect(e.retryAfterMs).toBeGreaterThan(85_000);
    expect(e.retryAfterMs).toBeLessThanOrEqual(until - Date.now() + 1_000);
    await expect(producer.enqueueMany(charge, [{ invoice: 'i-2' }], { tenant: 'acme' })).rejects.toBeInstanceOf(JobPausedError);
    expect(await sent()).toBe(0);
    await producer.enqueue(charge, { invoice: 'i-3' }, { tenant: 'globex' });
    expect(await sent()).toBe(1);
    producer.close();
  });

  it("with whilePaused 'refuse' and no job store: a ConfigError naming the option", () => {
    const queue = new MemoryQueue();
    expect(() => createProducer({ queueUrl: queue.create('q'), queue, jobs: [charge], whilePaused: 'refuse' }, {})).toThrow(
      /options\.whilePaused: 'refuse' needs the job store/,
    );
  });

  it('the HTTP API answers 503 with Retry-After (60 s for a pause with no end) and the problem type `paused`', async () => {
    const { producer, pauses, sent } = setup('refuse');
    await pauses.pause({ queue: 'paused' }, { by: 'ops' });
    const api = createJobsApi({ producer, jobs: [charge] });
    const res = await api.fetch(
      new Request('http://api.test/jobs/charge-invoice', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ invoice: 'i-1' }),
      }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('60');
    expect(((await res.json()) as { type: string }).type).toMatch(/paused$/);
    expect(await sent()).toBe(0);
    producer.close();
  });
});
