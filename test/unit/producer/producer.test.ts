import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR_JOB, decodeEnvelope } from '../../../src/core/envelope.js';
import { PayloadTooLargeError, ValidationError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { createProducer } from '../../../src/producer/producer.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

/* The producer over the in-memory queue port: what it sends, and what it refuses to send. */

const resize = defineJob({ name: 'resize', args: z.object({ key: z.string().min(1), width: z.number().int() }), handle: () => {} });

function setup(options: Record<string, unknown> = {}) {
  const memory = new MemoryQueue();
  const url = memory.create('jobs');
  const spill = memory.create('jobs-spill');
  const producer = createProducer({ queueUrl: url, jobs: [resize], queue: memory, ...options }, {});
  return { memory, url, spill, producer };
}

describe('Producer over a queue port', () => {
  it('sends the envelope (wire format v1) with its attributes, and answers the job and message ids', async () => {
    const { memory, url, producer } = setup();
    const { jobId, messageId } = await producer.enqueue(resize, { key: 'a.png', width: 100 }, { tenant: 'acme' });
    const [m] = memory.peek(url);
    expect(m!.messageId).toBe(messageId);
    const decoded = decodeEnvelope(m!.body, { messageId: messageId!, sentAt: Date.now() });
    expect(decoded).toMatchObject({
      ok: true,
      envelope: { v: 1, id: jobId, job: 'resize', args: { key: 'a.png', width: 100 }, tenant: 'acme' },
    });
    expect(m!.attributes[ATTR_JOB]?.StringValue).toBe('resize');
  });

  it('sends nothing for invalid args, naming the field and the rule', async () => {
    const { memory, url, producer } = setup();
    const error = await producer.enqueue(resize, { key: '', width: 1.5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues.map((i) => i.field).sort()).toEqual(['args.key', 'args.width']);
    expect(memory.peek(url)).toEqual([]);
  });

  it('refuses a message over maxMessageBytes before sending', async () => {
    const big = defineJob({ name: 'big', args: z.object({ blob: z.string() }), handle: () => {} });
    const { memory, url, producer } = setup({ jobs: [big], maxMessageBytes: 1024 });
    await expect(producer.enqueue(big, { blob: 'x'.repeat(2_000) })).rejects.toBeInstanceOf(PayloadTooLargeError);
    expect(memory.peek(url)).toEqual([]);
  });

  it('enqueueMany sends every entry (in batch calls of up to 10) and answers them in order', async () => {
    const { memory, url, producer } = setup();
    const results = await producer.enqueueMany(
      resize,
      Array.from({ length: 23 }, (_, i) => ({ key: `${i}.png`, width: i })),
    );
    expect(results).toHaveLength(23);
    const sent = new Map(memory.peek(url).map((m) => [m.messageId, JSON.parse(m.body).args.width as number]));
    expect(results.map((r) => sent.get(r.messageId!))).toEqual(Array.from({ length: 23 }, (_, i) => i));
  });

  it("sends a tenant's jobs past its allowance to the spillover queue", async () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const spill = memory.create('jobs-spill');
    const producer = createProducer(
      { queueUrl: url, jobs: [resize], queue: memory, spillover: { queueUrl: spill, ratePerSecond: 1, burst: 3 } },
      {},
    );
    await producer.enqueueMany(
      resize,
      Array.from({ length: 10 }, (_, i) => ({ key: `${i}.png`, width: i })),
      { tenant: 'noisy' },
    );
    await producer.enqueue(resize, { key: 'q.png', width: 1 }, { tenant: 'quiet' });
    expect(memory.peek(url)).toHaveLength(4); // noisy's burst of 3, and quiet's one
    expect(memory.peek(spill)).toHaveLength(7);
  });

  it('sends a tenant with a queue of its own there, past spillover and tiers; other tenants as before', async () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const spill = memory.create('jobs-spill');
    const acme = memory.create('jobs-acme');
    memory.create('jobs-high');
    const producer = createProducer(
      {
        queueUrl: url,
        jobs: [resize],
        queue: memory,
        tiers: true,
        tenantQueues: { acme },
        spillover: { queueUrl: spill, ratePerSecond: 1, burst: 3 },
      },
      {},
    );
    const args = Array.from({ length: 10 }, (_, i) => ({ key: `${i}.png`, width: i }));
    await producer.enqueueMany(resize, args, { tenant: 'acme', priority: 'high' });
    await producer.enqueue(resize, { key: 'one.png', width: 1 }, { tenant: 'acme' });
    await producer.enqueueMany(resize, args, { tenant: 'globex' });
    expect(memory.peek(acme)).toHaveLength(11); // all of acme's: no allowance, no tier lane
    expect(memory.peek(url)).toHaveLength(3); // globex's burst of 3…
    expect(memory.peek(spill)).toHaveLength(7); // …and the rest of it
    // A tenant named like an Object method has no queue of its own unless given one.
    await producer.enqueue(resize, { key: 'c.png', width: 1 }, { tenant: 'constructor' });
    expect(memory.peek(url)).toHaveLength(4);
  });

  it('refuses a tenant queue of the other kind (standard beside FIFO), naming the tenant', () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const fifo = memory.create('jobs-acme.fifo');
    expect(() => createProducer({ queueUrl: url, jobs: [resize], queue: memory, tenantQueues: { acme: fifo } }, {})).toThrow(
      'options.tenantQueues.acme: must be a standard queue, as options.queueUrl is',
    );
  });

  it("with tiers, sends each job to its tier's lane: the definition's tier, or the one given per enqueue", async () => {
    const memory = new MemoryQueue();
    const url = memory.create('jobs');
    const high = memory.create('jobs-high');
    const low = memory.create('jobs-low');
    const urgent = defineJob({ name: 'urgent', args: z.object({}), priority: 'high', handle: () => {} });
    const producer = createProducer({ queueUrl: url, jobs: [resize, urgent], queue: memory, tiers: true }, {});
    await producer.enqueue(urgent, {});
    await producer.enqueue(resize, { key: 'a.png', width: 1 });
    await producer.enqueueMany(
      resize,
      [
        { key: 'b.png', width: 1 },
        { key: 'c.png', width: 1 },
      ],
      { priority: 'low' },
    );
    await producer.enqueue(urgent, {}, { priority: 'normal' });
    expect(memory.peek(high)).toHaveLength(1);
    expect(memory.peek(url)).toHaveLength(2);
    expect(memory.peek(low)).toHaveLength(2);
  });

  it("without tiers, a job asked for a tier it cannot have is refused, naming the option; a definition's tier falls back to the queue", async () => {
    const { memory, url, producer } = setup();
    const error = await producer.enqueue(resize, { key: 'a.png', width: 1 }, { priority: 'high' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/options\.priority: needs tier lanes: set the producer option tiers/);
    await expect(producer.enqueue(resize, { key: 'a.png', width: 1 }, { priority: 'urgent' as 'high' })).rejects.toThrow(
      /options\.priority: must be high, normal or low/,
    );
    const urgent = defineJob({ name: 'urgent', args: z.object({}), priority: 'high', handle: () => {} });
    await producer.enqueue(urgent, {});
    expect(memory.peek(url)).toHaveLength(1);
  });
});
