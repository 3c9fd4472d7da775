import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { LATE_MS } from '../../src/core/rate-limit.js';
import { createProducer } from '../../src/producer/producer.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';
import { spawnWorker, type WorkerLine } from '../helpers/worker-process.js';
import { mostIn } from '../helpers/starts.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const empty = { visible: 0, inFlight: 0, delayed: 0 };

/** The job test/fixtures/worker-process.ts limits (RATE_PER_SECOND), as a producer sees it. */
const limited = defineJob({ name: 'limited', args: z.object({ n: z.number().int() }), handle: () => {} });

async function enqueue(queueUrl: string, n: number) {
  const producer = createProducer({ queueUrl }, LOCAL_ENV);
  await producer.enqueueMany(
    limited,
    Array.from({ length: n }, (_, i) => ({ n: i })),
  );
  producer.close();
}

const startsOf = (...workers: { lines: WorkerLine[] }[]) => workers.flatMap((w) => w.lines.filter((l) => l.event === 'start'));

describe('rate limits per job (fleet-wide, memcached)', () => {
  it('two worker processes together start no more than the rate; the rest wait in the workers, nothing re-sent, no attempt spent', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'rate');
    const n = 60;
    const perSecond = 20;
    await enqueue(queueUrl, n);
    const env = { RATE_PER_SECOND: String(perSecond), CONCURRENCY: '5', PREFETCH: '5', LOCK_KEY_PREFIX: `rate-${randomUUID()}:` };
    const a = spawnWorker(queueUrl, env);
    const b = spawnWorker(queueUrl, env);
    try {
      await eventually(() => startsOf(a, b).length >= n, 'every job to start', 60_000);
      await eventually(async () => (await queueCounts(sqs, queueUrl)).inFlight === 0, 'every job deleted', 30_000);
    } finally {
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      await Promise.all([a.exited, b.exited]);
    }
    const starts = startsOf(a, b);
    expect(new Set(starts.map((s) => s.jobId)).size).toBe(n); // each job ran
    expect(starts).toHaveLength(n); // once
    expect(a.count('start')).toBeGreaterThan(0); // both workers ran some
    expect(b.count('start')).toBeGreaterThan(0);
    // At most perSecond per second, plus the one start a burst of 1 allows and the slots a start may be late by.
    const allowance = 1 + Math.ceil((LATE_MS / 1000) * perSecond);
    expect(
      mostIn(
        starts.map((s) => s.at!),
        1_000,
      ),
    ).toBeLessThanOrEqual(perSecond + allowance);
    expect(a.count('waiting') + b.count('waiting')).toBeGreaterThan(0); // the limit was reached, and held
    expect([...a.lines, ...b.lines].filter((l) => l.event === 'waiting').every((l) => l.limit === 'rate-limit')).toBe(true);
    expect(a.count('deferred') + b.count('deferred')).toBe(0); // nothing re-sent
    expect(new Set(starts.map((s) => s.attempt))).toEqual(new Set([1])); // waiting is not an attempt
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  }, 120_000);

  it('a worker killed while jobs wait for their turn loses none: they come back and run on the other', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'rate-kill', { visibilityTimeout: 5 });
    const n = 40;
    await enqueue(queueUrl, n);
    const env = { RATE_PER_SECOND: '4', CONCURRENCY: '5', PREFETCH: '5', LOCK_KEY_PREFIX: `rate-kill-${randomUUID()}:` };
    const doomed = spawnWorker(queueUrl, env);
    await eventually(() => doomed.count('waiting') >= 5, 'jobs waiting for their turn in the doomed worker', 30_000);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const survivor = spawnWorker(queueUrl, env);
    try {
      await eventually(
        () => new Set(startsOf(doomed, survivor).map((s) => s.jobId)).size === n,
        'every job to start on one worker or the other',
        90_000,
      );
      await eventually(async () => (await queueCounts(sqs, queueUrl)).inFlight === 0, 'every job deleted', 30_000);
    } finally {
      survivor.child.kill('SIGTERM');
      await survivor.exited;
    }
    expect(await queueCounts(sqs, queueUrl)).toEqual(empty);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty); // a lost wait spends no receive of its own
  }, 180_000);

  it('with memcached down, rate-limited jobs still run (no limit rather than stuck)', async () => {
    const memcached = await PrivateMemcached.start();
    await memcached.stop();
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'rate-down');
    let runs = 0;
    const job = defineJob({
      name: 'limited',
      args: z.object({ n: z.number().int() }),
      rateLimit: { perSecond: 1 },
      handle: () => void runs++,
    });
    await enqueue(queueUrl, 5);
    const worker = start({ queues: [queueUrl], jobs: [job], memcached: memcached.servers, lockTimeoutMs: 200 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 5, 'every job to run', 30_000);
    await worker.stop();
    expect(runs).toBe(5);
    expect(events.count('job:waiting')).toBe(0);
    expect(await queueCounts(sqs, dlqUrl)).toEqual(empty);
  });
});
