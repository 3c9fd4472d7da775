import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type BatchItem, defineBatchJob } from '../../src/core/batch-job.js';
import { createCloudWatchClient } from '../../src/adapters/aws-clients.js';
import { renderStats } from '../../src/cli/render.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { collectStats } from '../../src/ops/stats.js';
import { statsSources } from '../helpers/ops.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const empty = { visible: 0, inFlight: 0, delayed: 0 };
const isEmpty = (c: typeof empty) => c.visible + c.inFlight + c.delayed === 0;
const item = z.object({ n: z.number().int(), user: z.string().default('u') });

/** Every handler call, as the handler saw it. */
function calls() {
  const batches: { key: string; items: BatchItem<z.output<typeof item>>[]; at: number }[] = [];
  const runs = new Map<number, number>();
  return {
    batches,
    runs,
    record(key: string, items: BatchItem<z.output<typeof item>>[]) {
      batches.push({ key, items, at: Date.now() });
      for (const i of items) runs.set(i.args.n, (runs.get(i.args.n) ?? 0) + 1);
    },
    sizes: () => batches.map((b) => b.items.length).sort((a, b) => a - b),
    total: () => batches.reduce((n, b) => n + b.items.length, 0),
  };
}

async function enqueue(queueUrl: string, job: Parameters<ReturnType<typeof createProducer>['enqueueMany']>[0], args: unknown[]) {
  const producer = createProducer({ queueUrl }, LOCAL_ENV);
  await producer.enqueueMany(job, args as never[]);
  producer.close();
}

describe('batch jobs: when a batch is flushed', () => {
  it('at maxSize, and a smaller batch once it holds minSize and the queue has nothing more', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'batch-size');
    const seen = calls();
    const maxWaitMs = 8_000;
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 10,
      minSize: 5,
      maxWaitMs,
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 25 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => seen.total() === 25, 'every item handled', 40_000);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty');
    // Receives bring at most 10 at a time, in any split (a loaded server answers with fewer): no
    // batch is above maxSize; one below maxSize went before maxWaitMs (it held minSize and the
    // queue had nothing more); one below minSize only once maxWaitMs had passed (a split such as
    // 10 + 6 + 5 + 4 leaves 4 that nothing more will join).
    const batches = events.of('batch:start');
    expect(Math.max(...batches.map((b) => b.size))).toBeLessThanOrEqual(10);
    expect(batches.some((b) => b.size >= 5 && b.size < 10 && b.heldMs < maxWaitMs)).toBe(true);
    for (const b of batches.filter((x) => x.size < 5)) expect(b.heldMs).toBeGreaterThanOrEqual(maxWaitMs - 50);
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
    expect(events.count('job:succeeded')).toBe(25);
    expect(batches.reduce((n, b) => n + b.size, 0)).toBe(25);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  }, 90_000);

  it('after maxWaitMs, whatever its size, with its items held invisible past the visibility timeout', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-wait');
    const seen = calls();
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 100,
      maxWaitMs: 5_000, // longer than the 2 s visibility timeout: the heartbeat keeps them
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(queueUrl, job, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const worker = start({ queues: [queueUrl], jobs: [job], visibilityTimeoutSeconds: 2 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => seen.total() === 3, 'the batch to be flushed', 30_000);
    expect(seen.sizes()).toEqual([3]); // one batch: no item came back to be received again
    expect(seen.batches[0]!.items.map((i) => i.attempt)).toEqual([1, 1, 1]);
    const [flush] = events.of('batch:start');
    expect(flush!.heldMs).toBeGreaterThanOrEqual(5_000);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty');
  });

  it('groups items by key: a batch never mixes keys', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-key');
    const seen = calls();
    const job = defineBatchJob({
      name: 'sync',
      args: item,
      key: (a) => a.user,
      maxSize: 4,
      maxWaitMs: 500,
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 12 }, (_, n) => ({ n, user: `user-${n % 3}` })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job] });
    await worker.start();
    await eventually(() => seen.total() === 12, 'every item handled', 30_000);
    for (const b of seen.batches) expect(new Set(b.items.map((i) => i.args.user))).toEqual(new Set([b.key]));
    expect(new Set(seen.batches.map((b) => b.key))).toEqual(new Set(['user-0', 'user-1', 'user-2']));
  });

  it('flushes the oldest batch when the worker holds all it may, and keeps receiving', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-budget');
    const seen = calls();
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 1_000,
      maxWaitMs: 3_000, // the tail, below the budget, waits for this
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 60 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job], maxHeldBatchItems: 20 });
    await worker.start();
    await eventually(() => seen.total() === 60, 'every item handled', 30_000);
    expect(Math.max(...seen.sizes())).toBeLessThanOrEqual(20);
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
  });
});

describe('batch jobs: per-item outcomes', () => {
  it('retries only the item the handler reports failed; its neighbours never run again', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'batch-item-fail');
    const seen = calls();
    const job = defineBatchJob({
      name: 'charge',
      args: item,
      maxSize: 10,
      maxWaitMs: 300,
      backoff: { baseMs: 0, jitter: 0 },
      handle: (items, ctx) => {
        seen.record(ctx.key, items);
        const bad = items.filter((i) => i.args.n === 3 && i.attempt === 1);
        return { failed: bad.map((i) => ({ jobId: i.jobId, error: new Error('card declined') })) };
      },
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 10 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => seen.runs.get(3) === 2, 'the failed item to run again', 30_000);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty');
    for (let n = 0; n < 10; n++) expect(seen.runs.get(n)).toBe(n === 3 ? 2 : 1);
    const retried = seen.batches.flatMap((b) => b.items).filter((i) => i.args.n === 3);
    expect(retried.map((i) => i.attempt)).toEqual([1, 2]);
    expect(events.of('job:failed').map((e) => e.error.message)).toEqual(['card declined']);
    expect(events.count('job:succeeded')).toBe(10);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });

  it('an UnrecoverableError sends only that item to the DLQ', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'batch-item-dlq');
    const seen = calls();
    const job = defineBatchJob({
      name: 'charge',
      args: item,
      maxSize: 5,
      maxWaitMs: 300,
      handle: (items, ctx) => {
        seen.record(ctx.key, items);
        const bad = items.filter((i) => i.args.n === 2);
        return { failed: bad.map((i) => ({ jobId: i.jobId, error: new UnrecoverableError('account closed') })) };
      },
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 5 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1 && events.count('job:succeeded') === 4, 'four done, one dead-lettered');
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty');
    const dead = await drain(sqs, dlqUrl);
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!.Body!).args.n).toBe(2);
    expect(dead[0]!.MessageAttributes?.['sqsjobs-dlq-reason']?.StringValue).toBe('unrecoverable');
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
  });

  it('a handler that throws fails every item of its batch: each is retried', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-throw');
    const seen = calls();
    let calls_ = 0;
    const job = defineBatchJob({
      name: 'bulk',
      args: item,
      maxSize: 4,
      maxWaitMs: 300,
      backoff: { baseMs: 0, jitter: 0 },
      handle: (items, ctx) => {
        seen.record(ctx.key, items);
        if (calls_++ === 0) throw new Error('database down');
      },
    });
    await enqueue(queueUrl, job, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 4, 'every item to succeed on its retry', 30_000);
    expect(events.count('job:failed')).toBe(4);
    for (let n = 1; n <= 4; n++) expect(seen.runs.get(n)).toBe(2);
    expect(events.of('batch:end')[0]!.failed).toBe(4);
  });

  it('poison items go to the DLQ at once and never reach the handler; a completed item that comes back is dropped before batching', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'batch-poison');
    const seen = calls();
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 10,
      maxWaitMs: 300,
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(job, { n: 1 }, { jobId: 'item-1' });
    // A producer in another language that got the args wrong: the envelope is fine, the args are not.
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: JSON.stringify({ v: 1, id: 'bad-1', job: 'index', args: { n: 'seven' } }),
      }),
    );
    // 2 s for memcached: a loaded machine's slow answer would read as memcached down, and the copy
    // would then run without the lock by design (fail open) instead of being dropped.
    const worker = start({ queues: [queueUrl], jobs: [job], lockTimeoutMs: 2_000 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 1 && events.count('job:dead-lettered') === 1, 'one done, one poison');
    await producer.enqueue(job, { n: 1 }, { jobId: 'item-1' }); // the same job id again, after it completed
    await eventually(() => events.count('job:duplicate') === 1, 'the copy to be dropped');
    producer.close();
    expect(seen.total()).toBe(1);
    expect(seen.batches[0]!.items[0]!.jobId).toBe('item-1');
    const dead = await drain(sqs, dlqUrl);
    expect(dead.map((m) => m.MessageAttributes?.['sqsjobs-dlq-reason']?.StringValue)).toEqual(['invalid-args']);
  });
});

describe('batch jobs: across workers and at shutdown', () => {
  it('exclusive: two workers never flush the same key at once, and each flushes what it holds', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-exclusive');
    const seen = calls();
    let running = 0;
    let most = 0;
    const job = defineBatchJob({
      name: 'sync',
      args: item,
      key: (a) => a.user,
      maxSize: 5,
      maxWaitMs: 200,
      exclusive: true,
      handle: async (items, ctx) => {
        seen.record(ctx.key, items);
        running++;
        most = Math.max(most, running);
        await sleepFor(300);
        running--;
      },
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 40 }, (_, n) => ({ n, user: 'acme' })),
    );
    const lockKeyPrefix = `batch-excl-${randomUUID()}:`;
    const a = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix });
    const b = start({ queues: [queueUrl], jobs: [job], lockKeyPrefix });
    const ea = recordEvents(a);
    const eb = recordEvents(b);
    await Promise.all([a.start(), b.start()]);
    await eventually(() => seen.total() === 40, 'every item handled', 60_000);
    expect(most).toBe(1);
    expect(ea.count('batch:start')).toBeGreaterThan(0);
    expect(eb.count('batch:start')).toBeGreaterThan(0);
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
  });

  it('tenant caps: a capped tenant’s items are in at most its cap of calls at once across two workers; other tenants’ items run beside them', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-capped');
    const seen = calls();
    const running = new Map<string, number>();
    const most = new Map<string, number>();
    const job = defineBatchJob({
      name: 'sync',
      args: item,
      key: (a) => a.user,
      maxSize: 4,
      maxWaitMs: 200,
      handle: async (items, ctx) => {
        seen.record(ctx.key, items);
        const tenants = new Set(items.map((i) => i.tenant ?? '-'));
        for (const t of tenants) {
          running.set(t, (running.get(t) ?? 0) + 1);
          most.set(t, Math.max(most.get(t) ?? 0, running.get(t)!));
        }
        await sleepFor(300);
        for (const t of tenants) running.set(t, running.get(t)! - 1);
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    // acme's items over 4 keys (so 4 batches could run at once), beta's over 4 more.
    for (const tenant of ['acme', 'beta']) {
      const args = Array.from({ length: 32 }, (_, n) => ({ n: tenant === 'acme' ? n : 100 + n, user: `${tenant}-${n % 4}` }));
      await producer.enqueueMany(job, args, { tenant });
    }
    producer.close();
    const lockKeyPrefix = `batch-cap-${randomUUID()}:`;
    const options = { queues: [queueUrl], jobs: [job], lockKeyPrefix, concurrency: 4, tenantCaps: { acme: 1 } };
    const a = start(options);
    const b = start(options);
    const ea = recordEvents(a);
    const eb = recordEvents(b);
    await Promise.all([a.start(), b.start()]);
    await eventually(() => seen.total() === 64, 'every item handled', 60_000);
    expect(most.get('acme')).toBe(1);
    expect(most.get('beta')).toBeGreaterThan(1);
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
    // Waiting for acme's permit re-sends nothing: every item was received once.
    expect(ea.count('job:deferred') + eb.count('job:deferred')).toBe(0);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue empty', 30_000);
  });

  it('stop() flushes half-filled batches within the deadline; nothing is lost or run twice', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-stop');
    const seen = calls();
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 1_000,
      maxWaitMs: 120_000,
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 30 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job] });
    await worker.start();
    await eventually(() => worker.inFlight.batched === 30, 'every item held in its batch');
    expect(seen.total()).toBe(0);
    await worker.stop();
    expect(seen.total()).toBe(30);
    expect([...seen.runs.values()].every((r) => r === 1)).toBe(true);
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
  });

  it('with no shutdown time, stop() hands held items back at once, unrun', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-stop-now');
    const seen = calls();
    const job = defineBatchJob({
      name: 'index',
      args: item,
      maxSize: 1_000,
      maxWaitMs: 120_000,
      handle: (items, ctx) => void seen.record(ctx.key, items),
    });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 12 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job], shutdownTimeoutMs: 0 });
    await worker.start();
    await eventually(() => worker.inFlight.batched === 12, 'every item held in its batch');
    await worker.stop();
    expect(seen.total()).toBe(0);
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(12);
  });
});

describe('batch jobs: metrics', () => {
  it('publishes BatchSize and BatchWait, which sqs-jobs stats shows per batch job', async () => {
    const { queueUrl } = await freshQueues(sqs, 'batch-stats');
    const namespace = `BatchStats${Date.now()}`;
    const job = defineBatchJob({ name: 'index', args: item, maxSize: 10, maxWaitMs: 300, handle: () => undefined });
    await enqueue(
      queueUrl,
      job,
      Array.from({ length: 25 }, (_, n) => ({ n })),
    );
    const worker = start({ queues: [queueUrl], jobs: [job], metrics: { sink: 'cloudwatch', namespace, flushIntervalMs: 60_000 } });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 25, 'every item handled');
    await worker.stop(); // flushes the metrics
    const cw = createCloudWatchClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
    const stats = await collectStats(statsSources(sqs, cw), { queueUrls: [queueUrl], namespace, windowMinutes: 10 });
    cw.destroy();
    const [row] = stats.jobs;
    const flushes = events.count('batch:start');
    expect(row!.counts.Succeeded).toBe(25);
    expect(row!.batches!.perMinute * stats.windowMinutes).toBeCloseTo(flushes, 5);
    expect(row!.batches!.size.average).toBeCloseTo(25 / flushes, 5);
    expect(renderStats(stats)).toMatch(/batch job\s+queue\s+batches\/min\s+size p50 \/ p99\s+held p50 \/ p99\nindex/);
  });
});
