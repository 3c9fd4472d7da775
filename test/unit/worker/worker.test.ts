import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { encodeEnvelope, newJobId } from '../../../src/core/envelope.js';
import { UnrecoverableError } from '../../../src/core/errors.js';
import { defineBatchJob } from '../../../src/core/batch-job.js';
import { defineJob } from '../../../src/core/job.js';
import type { JobLock } from '../../../src/ports/lock.js';
import type { Permits } from '../../../src/ports/permits.js';
import type { QueuePort } from '../../../src/ports/queue.js';
import { createWorker } from '../../../src/worker/worker.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryPermits } from '../../../src/testing/memory-permits.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { MemoryRateLimits } from '../../../src/testing/memory-rate-limits.js';
import { eventually } from '../../helpers/stack.js';
import { UNIT_WORKER } from '../../helpers/worker.js';

/** Send a job's message to an in-memory queue, as a producer would (`extra`: the envelope's other fields). */
const sendJob = (memory: MemoryQueue, url: string, job: string, args: Record<string, unknown>, extra: { tenant?: string } = {}) =>
  memory.send(url, {
    body: encodeEnvelope({ v: 1, id: newJobId(), job, args, enqueuedAt: new Date().toISOString(), ...extra }),
    attributes: {},
  });

// The worker over an injected queue port: no server, no SDK. What SQS itself does is tested
// against the real servers (test/integration, test/contracts); this proves the port is the seam.
describe('a worker handed its own queue port', () => {
  it('runs, retries and dead-letters through the port alone', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const seen: string[] = [];
    const job = defineJob({
      name: 'step',
      args: z.object({ n: z.number() }),
      backoff: { baseMs: 0, factor: 1, capMs: 0, jitter: 0 },
      handle: ({ n }, ctx) => {
        seen.push(`${n}@${ctx.attempt}`);
        if (n === 2 && ctx.attempt === 1) throw new Error('once');
        if (n === 3) throw new UnrecoverableError('never');
      },
    });
    const send = (n: number) =>
      memory.send(url, {
        body: encodeEnvelope({ v: 1, id: newJobId(), job: 'step', args: { n }, enqueuedAt: new Date().toISOString() }),
        attributes: {},
      });
    await Promise.all([send(1), send(2), send(3)]);
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue: memory,
        ...UNIT_WORKER,
      },
      {},
    );
    await worker.start();
    await eventually(
      async () => (await memory.receive(dlq, 10, 0, 0)).length === 1 && seen.includes('2@2'),
      'the retry and the dead letter',
    );
    await worker.stop();
    expect(seen.sort()).toEqual(['1@1', '2@1', '2@2', '3@1']);
    expect(await memory.receive(url, 10, 0, 30)).toHaveLength(0);
  });
});

describe('a batch whose item loses its lease while it waits', () => {
  it('goes on without that item, which comes back and runs once', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('batch-dlq');
    const url = memory.create('batch', { deadLetterQueueUrl: dlq, maxReceiveCount: 5 });
    const ids = Array.from({ length: 5 }, (_, n) => `item-${n}`);
    await Promise.all(
      ids.map((id, n) =>
        memory.send(url, {
          body: encodeEnvelope({ v: 1, id, job: 'index', args: { n }, enqueuedAt: new Date().toISOString() }),
          attributes: {},
        }),
      ),
    );
    // SQS refuses the heartbeat's extension of item-2 (as when another consumer received it): its
    // lease is lost, and the message comes back when its visibility ends.
    let refused = false;
    const handles = new Map<string, string>();
    const queue: QueuePort = {
      deleteBatch: (u, e) => memory.deleteBatch(u, e),
      send: (u, m) => memory.send(u, m),
      sendBatch: (u, e) => memory.sendBatch(u, e),
      maximumMessageBytes: (u) => memory.maximumMessageBytes(u),
      deadLetterTarget: (u) => memory.deadLetterTarget(u),
      changeVisibilityBatch: async (queueUrl, entries) => {
        const target = entries.find((e) => e.receiptHandle === handles.get('item-2'));
        const rest = entries.filter((e) => e !== target);
        const failures = await memory.changeVisibilityBatch(queueUrl, rest);
        if (target === undefined || refused) return failures;
        refused = true;
        return [...failures, { id: target.id, code: 'ReceiptHandleIsInvalid', message: 'refused by the test', kind: 'lease-lost' }];
      },
      receive: async (...a) => {
        const got = await memory.receive(...a);
        for (const m of got) handles.set(JSON.parse(m.body).id as string, m.receiptHandle);
        return got;
      },
    };
    const batches: string[][] = [];
    const job = defineBatchJob({
      name: 'index',
      args: z.object({ n: z.number() }),
      maxSize: 100,
      maxWaitMs: 2_500, // beyond one heartbeat (1 s)
      handle: (items) => void batches.push(items.map((i) => `${i.jobId}@${i.attempt}`)),
    });
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue,
        // Extended every second to 4 s: a loaded machine (tests run in parallel) that stalls a tick
        // must not lose other leases than the one refused.
        visibilityTimeoutSeconds: 4,
        heartbeatIntervalMs: 1_000,
        ...UNIT_WORKER,
      },
      {},
    );
    const lost: string[] = [];
    worker.on('heartbeat:lost', (e) => lost.push(e.jobId));
    await worker.start();
    await eventually(() => batches.flat().length === 5, 'every item handled once', 25_000);
    await worker.stop();
    expect(lost).toEqual(['item-2']);
    // item-2 ran once, from its redelivery (it may have joined the same batch before the flush).
    expect(batches.flat().sort()).toEqual(['item-0@1', 'item-1@1', 'item-2@2', 'item-3@1', 'item-4@1']);
    expect(await memory.receive(url, 10, 0, 30)).toHaveLength(0);
  });
});

describe('batch jobs at the budget', () => {
  it('keep dispatching as claims free room: duplicates found while the budget is full never stall the worker', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('budget-dlq');
    const url = memory.create('budget', { deadLetterQueueUrl: dlq, maxReceiveCount: 5 });
    const job = defineBatchJob({ name: 'b', args: z.object({ n: z.number() }), maxSize: 5, maxWaitMs: 200, handle: () => undefined });
    // Every claim finds its job completed, after a while: room frees only when a claim ends.
    const lock: JobLock = {
      claim: async () => {
        await new Promise((r) => setTimeout(r, 50));
        return 'completed';
      },
      extend: async () => 'held',
      complete: async () => true,
      release: async () => true,
      markDeadLettered: async () => true,
      close() {},
    };
    for (let n = 0; n < 6; n++) {
      await sendJob(memory, url, 'b', { n });
    }
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue: memory,
        lock,
        waitTimeSeconds: 0,
        deleteFlushMs: 0,
        concurrency: 1,
        prefetch: 1,
        maxHeldBatchItems: 1,
        handleSignals: false,
        logger: pino({ level: 'silent' }),
        metrics: { sink: 'off' },
      },
      {},
    );
    let duplicates = 0;
    worker.on('job:duplicate', () => duplicates++);
    await worker.start();
    await eventually(() => duplicates === 6, 'every message dropped as a duplicate');
    await worker.stop();
    expect(worker.inFlight).toEqual({ running: 0, buffered: 0, batched: 0 });
  });
});

describe('an exclusive batch whose handler is abandoned', () => {
  it('keeps its key until the lock TTL ends (another flush of the key must not start beside it)', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('abandon-dlq');
    const url = memory.create('abandon', { deadLetterQueueUrl: dlq, maxReceiveCount: 5 });
    const calls: string[] = [];
    const permits: Permits = {
      take: async (key: string) => {
        calls.push(`take ${key}`);
        return 0;
      },
      extend: async () => {},
      release: async (key: string) => void calls.push(`release ${key}`),
    };
    let started = 0;
    const job = defineBatchJob({
      name: 'sync',
      args: z.object({}),
      maxSize: 2,
      maxWaitMs: 0,
      exclusive: true,
      timeoutMs: 100,
      handle: async () => {
        started++;
        await new Promise(() => {}); // ignores its signal: never settles
      },
    });
    for (let i = 0; i < 2; i++) {
      await memory.send(url, {
        body: encodeEnvelope({ v: 1, id: newJobId(), job: 'sync', args: {}, enqueuedAt: new Date().toISOString() }),
        attributes: {},
      });
    }
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue: memory,
        lock: new MemoryLock(),
        permits,
        abortGraceMs: 50,
        ...UNIT_WORKER,
      },
      {},
    );
    const failed: number[] = [];
    worker.on('job:failed', (e) => failed.push(e.attempt));
    await worker.start();
    await eventually(() => failed.length === 2, 'both items failed by the timeout');
    await worker.stop();
    expect(started).toBeGreaterThanOrEqual(1);
    expect(calls.filter((c) => c.startsWith('take'))).not.toHaveLength(0);
    expect(calls.filter((c) => c.startsWith('release'))).toEqual([]); // the abandoned handler keeps the key
  });
});

describe('two kinds of job on one queue', () => {
  it('a batch budget that is full does not hold back ordinary jobs behind its messages', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('kinds-dlq');
    const url = memory.create('kinds', { deadLetterQueueUrl: dlq, maxReceiveCount: 5 });
    // The batch handler holds its slot (and its item) until the end: the batch budget stays full.
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const batch = defineBatchJob({ name: 'b', args: z.object({}), maxSize: 100, maxWaitMs: 60_000, handle: () => gate });
    let pings = 0;
    const ping = defineJob({ name: 'ping', args: z.object({}), handle: () => void pings++ });
    const send = (job: string) =>
      memory.send(url, {
        body: encodeEnvelope({ v: 1, id: newJobId(), job, args: {}, enqueuedAt: new Date().toISOString() }),
        attributes: {},
      });
    for (const job of ['b', 'b', 'b', 'ping', 'ping', 'ping']) await send(job);
    const worker = createWorker(
      {
        queues: [url],
        jobs: [batch, ping],
        queue: memory,
        maxHeldBatchItems: 1, // one batch message held (and flushed); the other two wait in the buffer
        concurrency: 2,
        waitTimeSeconds: 0,
        deleteFlushMs: 0,
        shutdownTimeoutMs: 0,
        handleSignals: false,
        logger: pino({ level: 'silent' }),
        metrics: { sink: 'off' },
      },
      {},
    );
    await worker.start();
    await eventually(() => pings === 3, 'the ordinary jobs to run');
    release();
    await worker.stop();
  });
});

describe('a job over its tenant cap waits in the worker', () => {
  it('runs one at a time under cap 1, the others waiting here (told once each, nothing re-sent); a stop hands the waiting ones back, unrun, their permits free', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const permits = new MemoryPermits();
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const started: number[] = [];
    const job = defineJob({
      name: 'render',
      args: z.object({ n: z.number() }),
      handle: async ({ n }) => {
        started.push(n);
        await gate;
      },
    });
    const send = (n: number) =>
      memory.send(url, {
        body: encodeEnvelope({ v: 1, id: newJobId(), job: 'render', args: { n }, enqueuedAt: new Date().toISOString(), tenant: 'acme' }),
        attributes: {},
      });
    await Promise.all([send(1), send(2), send(3)]);
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue: memory,
        lock: new MemoryLock(),
        permits,
        tenantCaps: { acme: 1 },
        ...UNIT_WORKER,
        shutdownTimeoutMs: 5_000,
      },
      {},
    );
    const fates: string[] = [];
    worker.on('job:waiting', (e) => void fates.push(`waiting ${e.jobId}`));
    worker.on('job:deferred', (e) => void fates.push(`deferred ${e.jobId}`));
    await worker.start();
    await eventually(() => started.length === 1 && fates.length === 2, 'one running, two waiting');
    await new Promise((r) => setTimeout(r, 1_200)); // two of the tenant's polls: still one running, nobody told twice
    expect(started).toHaveLength(1);
    expect(fates.filter((f) => f.startsWith('waiting'))).toHaveLength(2);
    expect(new Set(fates).size).toBe(2);
    expect(worker.inFlight).toMatchObject({ running: 1, buffered: 2 });
    expect(await memory.counts(url)).toMatchObject({ visible: 0, inFlight: 3 }); // held: nothing re-sent, nothing visible
    const stopped = worker.stop();
    open();
    await stopped;
    expect(started).toHaveLength(1); // the waiting two never started
    const back = await memory.receive(url, 10, 0, 30);
    expect(back).toHaveLength(2); // handed back, visible at once
    expect(await permits.take('acme', 1, 'after', 60)).toBe(0); // the running one's permit was given back
  });
});

describe('a job with a rate limit (in memory)', () => {
  /** Two workers sharing one queue, lock and rate limits; the starts of each tenant's jobs. */
  async function run(rateLimit: { perSecond: number; perTenant?: boolean }, tenants: readonly string[], perTenant: number) {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const starts: { tenant: string; at: number }[] = [];
    const job = defineJob({
      name: 'call-api',
      args: z.object({ n: z.number() }),
      rateLimit,
      handle: (_a, ctx) => void starts.push({ tenant: ctx.tenant ?? '', at: Date.now() }),
    });
    for (const tenant of tenants) for (let n = 0; n < perTenant; n++) await sendJob(memory, url, 'call-api', { n }, { tenant });
    const lock = new MemoryLock();
    const rateLimits = new MemoryRateLimits();
    const workers = [0, 1].map(() =>
      createWorker({ queues: [url], jobs: [job], queue: memory, lock, rateLimits, concurrency: 3, prefetch: 2, ...UNIT_WORKER }, {}),
    );
    const deferred: string[] = [];
    for (const w of workers) w.on('job:deferred', (e) => void deferred.push(e.jobId));
    const startedAt = Date.now();
    await Promise.all(workers.map((w) => w.start()));
    await eventually(() => starts.length === tenants.length * perTenant, 'every job to start', 20_000);
    await Promise.all(workers.map((w) => w.stop()));
    return { starts, startedAt, deferred, dlq: await memory.counts(dlq) };
  }

  // A start is never before its slot, and slots are 1/perSecond apart, the first at most one slot
  // before the first ask (a quiet spell's slots are skipped): so n starts end no sooner than
  // (n - 2) slots after the workers start, however late a loaded machine starts them.
  it('shares one rate between workers: 15 starts at 10/s end no sooner than 1.3 s in, none re-sent', async () => {
    const { starts, startedAt, deferred, dlq } = await run({ perSecond: 10 }, ['acme'], 15);
    expect(Math.max(...starts.map((s) => s.at)) - startedAt).toBeGreaterThanOrEqual(1_300);
    expect(deferred).toEqual([]);
    expect(dlq).toMatchObject({ visible: 0 });
  });

  it('with perTenant, gives each tenant the rate to itself', async () => {
    const { starts, startedAt } = await run({ perSecond: 5, perTenant: true }, ['acme', 'globex'], 4);
    for (const tenant of ['acme', 'globex']) {
      const times = starts.filter((s) => s.tenant === tenant).map((s) => s.at);
      expect(Math.max(...times) - startedAt).toBeGreaterThanOrEqual(400); // 4 starts 200 ms apart
    }
    // Neither waited behind the other's rate: globex's jobs (queued after acme's) began before acme's ended.
    const times = (tenant: string) => starts.filter((s) => s.tenant === tenant).map((s) => s.at);
    expect(Math.min(...times('globex'))).toBeLessThan(Math.max(...times('acme')));
  });
});

describe('a batch job with a rate limit (in memory)', () => {
  it('takes one slot per handler call, shared by two workers: 5 calls at 5/s end no sooner than 0.6 s in, every item once', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('calls-dlq');
    const url = memory.create('calls', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const calls: { at: number; items: number[] }[] = [];
    const job = defineBatchJob({
      name: 'push-many',
      args: z.object({ n: z.number() }),
      maxSize: 2,
      maxWaitMs: 0,
      rateLimit: { perSecond: 5 },
      handle: (items) => void calls.push({ at: Date.now(), items: items.map((i) => i.args.n) }),
    });
    for (let n = 0; n < 10; n++) await sendJob(memory, url, 'push-many', { n });
    const lock = new MemoryLock();
    const rateLimits = new MemoryRateLimits();
    const workers = [0, 1].map(() =>
      createWorker({ queues: [url], jobs: [job], queue: memory, lock, rateLimits, concurrency: 2, ...UNIT_WORKER }, {}),
    );
    const startedAt = Date.now();
    await Promise.all(workers.map((w) => w.start()));
    await eventually(() => calls.flatMap((c) => c.items).length === 10, 'every item handled', 20_000);
    await Promise.all(workers.map((w) => w.stop()));
    expect(calls.flatMap((c) => c.items).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // n calls on a grid 200 ms apart end no sooner than (n - 2) slots after the workers start.
    expect(Math.max(...calls.map((c) => c.at)) - startedAt).toBeGreaterThanOrEqual((calls.length - 2) * 200);
    expect(calls.length).toBeGreaterThanOrEqual(5); // at most 2 items a call
  });

  it('refuses perTenant on a batch job, naming the field', () => {
    expect(() =>
      defineBatchJob({
        name: 'b',
        args: z.object({}),
        maxSize: 5,
        maxWaitMs: 0,
        rateLimit: { perSecond: 1, perTenant: true } as never,
        handle: () => undefined,
      }),
    ).toThrow(/rateLimit\.perTenant/);
  });
});
