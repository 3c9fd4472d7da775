import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCloudWatchClient } from '../../src/adapters/aws-clients.js';
import { defineJob } from '../../src/core/job.js';
import { collectStats } from '../../src/ops/stats.js';
import { statsSources } from '../helpers/ops.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const empty = { visible: 0, inFlight: 0, delayed: 0 };
const isEmpty = (c: typeof empty) => c.visible + c.inFlight + c.delayed === 0;

describe('tenant fairness (spillover)', () => {
  it("a burst from one tenant does not bury a quiet tenant's job, and nothing is deferred or retried", async () => {
    const { queueUrl, dlqUrl, spilloverQueueUrl } = await freshQueues(sqs, 'fair', { spillover: true });
    expect(spilloverQueueUrl).toBeDefined();
    const started: string[] = [];
    const attempts = new Set<number>();
    const job = defineJob({
      name: 'upload',
      args: z.object({ n: z.number() }),
      handle: async (_a, ctx) => {
        started.push(ctx.tenant ?? '?');
        attempts.add(ctx.attempt);
        await new Promise((r) => setTimeout(r, 5));
      },
    });
    // Its own key prefix: allowances are per tenant, and another run of this suite may share the memcached.
    const lockKeyPrefix = `fair-${randomUUID()}:`;
    const producer = createProducer(
      { queueUrl, lockKeyPrefix, spillover: { queueUrl: spilloverQueueUrl!, ratePerSecond: 1, burst: 5 } },
      LOCAL_ENV,
    );
    const burst = 150;
    await producer.enqueueMany(
      job,
      Array.from({ length: burst }, (_, n) => ({ n })),
      { tenant: 'noisy' },
    );
    const quiet = ['q1', 'q2', 'q3', 'q4', 'q5'];
    for (const tenant of quiet) await producer.enqueue(job, { n: 0 }, { tenant });
    // The burst past its allowance went to the spillover queue; the quiet jobs to the main queue.
    expect((await queueCounts(sqs, spilloverQueueUrl!)).visible).toBe(burst - 5);
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(5 + quiet.length);

    const worker = start({
      queues: [
        { url: queueUrl, weight: 9 },
        { url: spilloverQueueUrl!, weight: 1 },
      ],
      jobs: [job],
      concurrency: 4,
      prefetch: 4,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === burst + quiet.length, 'every job to run', 90_000);
    await worker.stop();
    // Every quiet job started while most of the burst still waited.
    const lastQuiet = Math.max(...quiet.map((t) => started.indexOf(t)));
    expect(lastQuiet).toBeLessThan(40);
    expect(started.filter((t) => t === 'noisy')).toHaveLength(burst);
    expect([...attempts]).toEqual([1]); // fairness deferred nothing: no receive was spent on it
    expect(events.count('job:handed-back') + events.count('job:resent')).toBe(0);
    for (const url of [queueUrl, spilloverQueueUrl!, dlqUrl]) expect(await queueCounts(sqs, url)).toEqual(empty);
    producer.close();
  });

  it("tenants with queues of their own: their jobs go there, past spillover, and a worker shares its slots by the queues' weights while both are backlogged", async () => {
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'fairlanes', { spillover: true });
    const heavy = await freshQueues(sqs, 'fairlanes-heavy');
    const light = await freshQueues(sqs, 'fairlanes-light');
    const started: string[] = [];
    const job = defineJob({
      name: 'report',
      args: z.object({ n: z.number() }),
      handle: async (_a, ctx) => {
        started.push(ctx.tenant ?? '?');
        await new Promise((r) => setTimeout(r, 20));
      },
    });
    const producer = createProducer(
      {
        queueUrl,
        spillover: { queueUrl: spilloverQueueUrl!, ratePerSecond: 1, burst: 5 },
        tenantQueues: { heavy: heavy.queueUrl, light: light.queueUrl },
      },
      LOCAL_ENV,
    );
    const n = 60;
    for (const tenant of ['heavy', 'light'])
      await producer.enqueueMany(
        job,
        Array.from({ length: n }, (_, i) => ({ n: i })),
        { tenant },
      );
    await producer.enqueue(job, { n: 0 }, { tenant: 'other' });
    // Each tenant's whole burst is in its own queue: no allowance, no spillover.
    expect((await queueCounts(sqs, heavy.queueUrl)).visible).toBe(n);
    expect((await queueCounts(sqs, light.queueUrl)).visible).toBe(n);
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(1);
    expect((await queueCounts(sqs, spilloverQueueUrl!)).visible).toBe(0);
    producer.close();

    const worker = start({
      queues: [queueUrl, spilloverQueueUrl!, { url: heavy.queueUrl, weight: 3 }, { url: light.queueUrl, weight: 1 }],
      jobs: [job],
      concurrency: 2,
      prefetch: 4,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 2 * n + 1, 'every job to run', 90_000);
    await worker.stop();
    // While both are backlogged (the first 40 starts), about 3 heavy to 1 light: neither first-come nor starved.
    const first = started.filter((t) => t !== 'other').slice(0, 40);
    const heavyShare = first.filter((t) => t === 'heavy').length;
    expect(heavyShare).toBeGreaterThanOrEqual(25);
    expect(heavyShare).toBeLessThanOrEqual(35);
  });

  it('stats shows the spillover queue beside its queue, and the jobs that ran from it apart', async () => {
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'fairstats', { spillover: true });
    const namespace = `FairStats${Date.now()}`;
    const job = defineJob({ name: 'upload', args: z.object({}), handle: () => {} });
    const lockKeyPrefix = `fair-${randomUUID()}:`; // allowances are per tenant: not shared with another run on this memcached
    const producer = createProducer(
      // A refill of one per 1,000 s: the allowance of 2 cannot grow back between the two sends, however slow the stack.
      { queueUrl, lockKeyPrefix, spillover: { queueUrl: spilloverQueueUrl!, ratePerSecond: 0.001, burst: 2 } },
      LOCAL_ENV,
    );
    await producer.enqueueMany(job, [{}, {}, {}, {}, {}], { tenant: 'noisy' }); // 2 to the main queue, 3 spilled
    await producer.enqueue(job, {}, { tenant: 'noisy' }); // spilled too: the allowance is used up
    const worker = start({
      queues: [queueUrl, spilloverQueueUrl!],
      jobs: [job],
      metrics: { sink: 'cloudwatch', namespace, flushIntervalMs: 60_000 },
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 6, 'every job to run');
    await worker.stop(); // flushes the metrics
    const cw = createCloudWatchClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
    const stats = await collectStats(statsSources(sqs, cw), { queueUrls: [queueUrl], namespace, windowMinutes: 10 });
    cw.destroy();
    expect(stats.queues.map((q) => q.url)).toEqual([queueUrl, spilloverQueueUrl]);
    const succeeded = Object.fromEntries(stats.jobs.map((j) => [j.queue, j.counts.Succeeded]));
    expect(succeeded[stats.queues[1]!.name]).toBe(4); // the spilled jobs, apart
    // moto keeps the main queue's row to its own 2; LocalStack's ListMetrics matches the Queue
    // dimension by prefix, so there the main row also counts the spillover queue's jobs.
    if (process.env.SQS_JOBS_TEST_STACK === 'moto') expect(succeeded[stats.queues[0]!.name]).toBe(2);
    producer.close();
  });

  it('refuses spillover on FIFO queues, naming the option', async () => {
    expect(() =>
      createProducer(
        {
          queueUrl: 'http://127.0.0.1:4566/000000000000/orders.fifo',
          spillover: { queueUrl: 'http://127.0.0.1:4566/000000000000/orders-spill' },
        },
        LOCAL_ENV,
      ),
    ).toThrow(/options\.spillover: needs standard queues/);
  });
});

/** A job of `ms` that records what ran, its attempts and the most that ran at once; `n` of acme's enqueued. */
/** `n` jobs of the capped tenant acme, each `ms` long, and `others` of tenant globex (each `othersMs` long) sent between them. */
async function cappedRun(queueUrl: string, n: number, ms: number, others = 0, othersMs = ms) {
  const seen = { running: 0, most: 0, ran: [] as number[], others: 0, attempts: new Set<number>() };
  const job = defineJob({
    name: 'render',
    args: z.object({ n: z.number() }),
    handle: async ({ n }, ctx) => {
      seen.attempts.add(ctx.attempt);
      if (ctx.tenant !== 'acme') {
        seen.others++;
        await new Promise((r) => setTimeout(r, othersMs));
        return;
      }
      seen.ran.push(n);
      seen.most = Math.max(seen.most, ++seen.running);
      await new Promise((r) => setTimeout(r, ms));
      seen.running--;
    },
  });
  const producer = createProducer({ queueUrl }, LOCAL_ENV);
  for (let i = 0; i < Math.max(n, others); i++) {
    if (i < n) await producer.enqueue(job, { n: i }, { tenant: 'acme' });
    if (i < others) await producer.enqueue(job, { n: i }, { tenant: 'globex' });
  }
  producer.close();
  return { job, seen };
}

describe('spillover allowances shared by every producer (memcached)', () => {
  it("two producers give a tenant one allowance, and a tenantGroup one allowance for all of a customer's names", async () => {
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'fair-shared', { spillover: true });
    const job = defineJob({ name: 'upload', args: z.object({ n: z.number() }), handle: () => {} });
    const lockKeyPrefix = `shared-${randomUUID()}:`;
    // A burst of 5 per window of 5,000 s: the whole test sends within one window. Per-process buckets
    // would let 10 through (5 per producer), and so would shared ones per tenant name (5 per name).
    const spillover = { queueUrl: spilloverQueueUrl!, ratePerSecond: 0.001, burst: 5, tenantGroup: (t: string) => t.split(':')[0]! };
    const producers = [0, 1].map(() => createProducer({ queueUrl, lockKeyPrefix, spillover }, LOCAL_ENV));
    const args = Array.from({ length: 10 }, (_, n) => ({ n }));
    await Promise.all(producers.map((p, i) => p.enqueueMany(job, args, { tenant: `acme:project-${i}` })));
    for (const p of producers) p.close();
    const main = (await queueCounts(sqs, queueUrl)).visible;
    expect(main).toBe(5); // one allowance for acme, whichever producer and name sent
    expect((await queueCounts(sqs, spilloverQueueUrl!)).visible).toBe(20 - main);
  });

  it('with memcached unreachable, each producer meters on its own and nothing fails', async () => {
    const memcached = await PrivateMemcached.start();
    await memcached.stop();
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'fair-shared-down', { spillover: true });
    const job = defineJob({ name: 'upload', args: z.object({ n: z.number() }), handle: () => {} });
    const spillover = { queueUrl: spilloverQueueUrl!, ratePerSecond: 0.001, burst: 5 };
    const producers = [0, 1].map(() => createProducer({ queueUrl, memcached: memcached.servers, spillover }, LOCAL_ENV));
    const args = Array.from({ length: 10 }, (_, n) => ({ n }));
    await Promise.all(producers.map((p) => p.enqueueMany(job, args, { tenant: 'acme' })));
    for (const p of producers) p.close();
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(10); // each producer's own burst of 5
    expect((await queueCounts(sqs, spilloverQueueUrl!)).visible).toBe(10);
  });
});

describe('tenant caps (fleet-wide)', () => {
  it('never runs more of a tenant at once than its cap across two workers; the rest wait in the workers, nothing re-sent, no attempt lost', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'caps');
    const lockKeyPrefix = `caps-${randomUUID()}:`;
    const n = 12;
    const { job, seen } = await cappedRun(queueUrl, n, 300);
    const options = {
      queues: [queueUrl],
      jobs: [job],
      lockKeyPrefix,
      concurrency: 5,
      tenantCaps: { acme: 2 },
      capDelaySeconds: 1,
    };
    const a = start(options);
    const b = start(options);
    const ea = recordEvents(a);
    const eb = recordEvents(b);
    await Promise.all([a.start(), b.start()]);
    await eventually(() => ea.count('job:succeeded') + eb.count('job:succeeded') === n, 'every job to run', 90_000);
    // The last success can come before a redundant copy has arrived (CI once saw one message
    // visible right after it); a worker deletes such a copy as a duplicate. So wait for the queue to
    // empty with the workers still running, then check that each job ran exactly once.
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty', 30_000);
    await Promise.all([a.stop(), b.stop()]);
    expect(seen.ran.sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i)); // each job ran once
    expect(seen.most).toBeLessThanOrEqual(2);
    expect(ea.count('job:waiting') + eb.count('job:waiting')).toBeGreaterThan(0); // the cap was reached and held
    // They waited in the workers (room for 10 each): none was re-sent, none spent a receive.
    expect(ea.count('job:deferred') + eb.count('job:deferred')).toBe(0);
    expect([...seen.attempts]).toEqual([1]);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });

  it('a job past half its receives before the DLQ never waits held (each worker dying would spend one): re-sent instead, not counted as an attempt', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'caps-half', { maxReceiveCount: 4 });
    const n = 4;
    const { job, seen } = await cappedRun(queueUrl, n, 300);
    // Spend two receives of each message: the worker's is then its third of four, past half (not its last).
    let first: Awaited<ReturnType<typeof drain>> = [];
    for (let i = 0; i < 2; i++) {
      first = await drain(sqs, queueUrl, 1);
      expect(first).toHaveLength(n);
      await eventually(async () => (await queueCounts(sqs, queueUrl)).visible === n, 'the messages to come back', 30_000);
    }
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      lockKeyPrefix: `caps-half-${randomUUID()}:`,
      concurrency: 4,
      tenantCaps: { acme: 1 },
      capDelaySeconds: 1,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === n, 'every job to run', 90_000);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty', 30_000);
    await worker.stop();
    expect(seen.ran.sort((x, y) => x - y)).toEqual([0, 1, 2, 3]);
    expect(seen.most).toBe(1);
    // Room to wait, but none waited past half its receives: those over the cap were re-sent (their copies, on a first receive, may wait).
    const originals = new Set(first.map((m) => m.MessageId));
    expect(events.of('job:waiting').filter((e) => originals.has(e.messageId))).toEqual([]);
    const deferred = events.of('job:deferred').filter((e) => originals.has(e.messageId));
    expect(deferred.length).toBeGreaterThan(0);
    for (const e of deferred) expect(e.reason).toContain('past half its receives before the DLQ, not held');
    expect([...seen.attempts]).toEqual([3]); // the deferral did not count
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });

  it('with little room to wait in the worker and the queue to itself, it receives no faster than waiting jobs leave: nothing re-sent, never past the cap', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'caps-full');
    const n = 12;
    const { job, seen } = await cappedRun(queueUrl, n, 200);
    // concurrency + prefetch = 3: three may wait without slowing the intake, three more as it slows, no more.
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      lockKeyPrefix: `caps-full-${randomUUID()}:`,
      concurrency: 2,
      prefetch: 1,
      tenantCaps: { acme: 1 },
      capDelaySeconds: 1,
    });
    const events = recordEvents(worker);
    let mostHeld = 0;
    const sample = setInterval(() => {
      const held = worker.inFlight;
      mostHeld = Math.max(mostHeld, held.running + held.buffered);
    }, 10);
    await worker.start();
    try {
      await eventually(() => events.count('job:succeeded') === n, 'every job to run', 90_000);
      await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty', 30_000);
    } finally {
      clearInterval(sample);
    }
    await worker.stop();
    expect(seen.ran.sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(seen.most).toBe(1);
    expect(events.count('job:waiting')).toBeGreaterThan(0);
    expect(mostHeld).toBeLessThanOrEqual(2 * 3 + 1); // the room, and the one running
    expect(events.count('job:deferred')).toBe(0); // nobody else is behind them: they wait, nothing is re-sent
    expect([...seen.attempts]).toEqual([1]);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });

  it("with little room and another tenant's jobs behind them, the capped jobs past the room are re-sent once, delayed to about their turn; the other tenant's run", async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'caps-mixed');
    const n = 12;
    // acme's jobs come in faster than one at a time can run them, while globex's short jobs keep the queue moving.
    const { job, seen } = await cappedRun(queueUrl, n, 400, 2 * n, 50);
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      lockKeyPrefix: `caps-mixed-${randomUUID()}:`,
      concurrency: 2,
      prefetch: 1,
      tenantCaps: { acme: 1 },
      capDelaySeconds: 5,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 3 * n, 'every job to run', 90_000);
    await eventually(async () => isEmpty(await queueCounts(sqs, queueUrl)), 'the queue to empty', 30_000);
    await worker.stop();
    expect(seen.ran.sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(seen.others).toBe(2 * n);
    expect(seen.most).toBe(1);
    // Re-sent to their turns (one start per 400 ms here, three waiting ahead: a second or two), not
    // capDelaySeconds (5, only until the worker has seen acme's jobs start); about once each.
    const delays = events.of('job:deferred').map((e) => e.delaySeconds);
    expect(delays.length).toBeGreaterThan(0);
    expect(delays.length).toBeLessThanOrEqual(n);
    expect(delays.some((d) => d < 5)).toBe(true);
    expect([...seen.attempts]).toEqual([1]); // a deferral is not an attempt
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });

  it('with memcached down, capped jobs still run (no cap rather than stuck)', async () => {
    const memcached = await PrivateMemcached.start();
    await memcached.stop();
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'caps-down');
    let runs = 0;
    const job = defineJob({ name: 'render', args: z.object({}), handle: () => void runs++ });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(job, [{}, {}, {}, {}], { tenant: 'acme' });
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      memcached: memcached.servers,
      lockTimeoutMs: 200,
      tenantCaps: { acme: 1 },
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 4, 'every job to run');
    await worker.stop();
    expect(runs).toBe(4);
    expect(events.count('job:deferred')).toBe(0);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
    producer.close();
  });
});
