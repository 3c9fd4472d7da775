import { randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { ATTR_DLQ_SOURCE } from '../../src/core/dead-letter.js';
import { defineJob } from '../../src/core/job.js';
import { provisionQueues } from '../../src/ops/queues.js';
import { createProducer } from '../../src/producer/producer.js';
import { readRedrivePolicy } from '../helpers/ops.js';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const run = promisify(execFile);
const cli = ['node', ['--import', 'tsx', 'src/cli/main.ts']] as const;
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

describe('priority tiers', () => {
  it("`queues create --tiers` makes the lanes <name>-high and <name>-low, with the queue's settings and DLQ", async () => {
    const name = `tiers-${randomUUID().slice(0, 8)}`;
    const { stdout } = await run(cli[0], [...cli[1], 'queues', 'create', '--name', name, '--tiers', '--max-receive-count', '3'], {
      env: { ...process.env, ...LOCAL_ENV },
    });
    expect(stdout).toMatch(new RegExp(`^high: .*/${name}-high  \\(priority tier high`, 'm'));
    expect(stdout).toMatch(new RegExp(`^low: .*/${name}-low  \\(priority tier low`, 'm'));
    expect(stdout).toMatch(new RegExp(`^${name}-high: created$`, 'm'));
    const queueUrl = /^queue: (\S+)/m.exec(stdout)![1]!;
    const main = await readRedrivePolicy(sqs, queueUrl);
    for (const lane of ['high', 'low']) {
      expect(await readRedrivePolicy(sqs, `${queueUrl}-${lane}`)).toEqual(main);
    }
    expect(main?.maxReceiveCount).toBe(3);
  });

  it('FIFO lanes keep .fifo at the end', async () => {
    const name = `tiersf-${randomUUID().slice(0, 8)}.fifo`;
    const pair = await provisionQueues(new SqsQueueAdmin(sqs), { name, tiers: true });
    expect(pair.lanes?.high).toMatch(new RegExp(`/${name.replace('.fifo', '')}-high\\.fifo$`));
    expect(pair.lanes?.low).toMatch(/-low\.fifo$/);
  });

  it('strict: a worker starts the high lane first and the low lane last; each lane keeps its jobs and its failures name their lane', async () => {
    const pair = await freshQueues(sqs, 'tiered', { tiers: true, maxReceiveCount: 1 });
    const started: string[] = [];
    const work = (name: string, priority?: 'high') =>
      defineJob({
        name,
        args: z.object({ n: z.number() }),
        ...(priority === undefined ? {} : { priority }),
        handle: async (_a, ctx) => {
          started.push(`${name}:${ctx.queueUrl.split('/').at(-1)}`);
          await new Promise((r) => setTimeout(r, 40));
        },
      });
    const urgent = work('urgent', 'high');
    const report = work('report');
    const poison = defineJob({
      name: 'poison',
      args: z.object({}),
      priority: 'high',
      handle: () => {
        throw new Error('bad input');
      },
      backoff: { baseMs: 0 },
    });
    const producer = createProducer({ queueUrl: pair.queueUrl, tiers: true, jobs: [urgent, report, poison] }, LOCAL_ENV);
    const n = 6;
    const args = Array.from({ length: n }, (_, i) => ({ n: i }));
    // Low first, high last: the order they were sent in is not the order they run in.
    await producer.enqueueMany(report, args, { priority: 'low' });
    await producer.enqueueMany(report, args);
    await producer.enqueueMany(urgent, args);
    expect((await queueCounts(sqs, pair.lanes!.high)).visible).toBe(n);
    expect((await queueCounts(sqs, pair.lanes!.low)).visible).toBe(n);
    expect((await queueCounts(sqs, pair.queueUrl)).visible).toBe(n);

    const worker = start({
      queues: [pair.queueUrl],
      tiers: { pick: 'strict', minShare: 0.01 },
      jobs: [urgent, report, poison],
      concurrency: 1,
      prefetch: 2,
      waitTimeSeconds: 1,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 3 * n, 'every job to run', 60_000);
    const lane = (s: string) => s.split(':')[1];
    const name = pair.queueUrl.split('/').at(-1)!;
    // Strict order holds among the messages a worker holds; a slot that frees while the high lane's
    // receive is still out starts what is there (the worker never idles waiting for a lane). So on a
    // loaded host a normal job may slip in early, but the high lane's jobs all start near the front,
    // and the lanes start in order on average.
    const positions = (l: string) => started.flatMap((s, i) => (lane(s) === l ? [i] : []));
    expect(Math.max(...positions(`${name}-high`))).toBeLessThan(n + 2);
    const mean = (l: string) => positions(l).reduce((sum, i) => sum + i, 0) / n;
    expect(mean(`${name}-high`)).toBeLessThan(mean(name));
    expect(mean(name)).toBeLessThan(mean(`${name}-low`));
    expect(started.filter((s) => lane(s) === `${name}-low`)).toHaveLength(n);

    // A high job that fails for good lands in the one DLQ, naming its lane to go back to.
    await producer.enqueue(poison, {}, { jobId: 'poison-1' });
    await eventually(() => events.count('job:dead-lettered') === 1, 'the poison job to be dead-lettered', 60_000);
    await worker.stop();
    const letters = await drain(sqs, pair.dlqUrl);
    expect(letters).toHaveLength(1);
    expect(letters[0]!.MessageAttributes?.[ATTR_DLQ_SOURCE]?.StringValue).toBe(pair.lanes!.high);
    producer.close();
  });

  it('a worker told to serve tiers whose lanes do not exist says how to make them', async () => {
    const pair = await freshQueues(sqs, 'nolanes');
    const job = defineJob({ name: 'x', args: z.object({}), handle: () => {} });
    const worker = start({ queues: [pair.queueUrl], tiers: true, jobs: [job] });
    await expect(worker.start()).rejects.toThrow(/tier's lane: create the lanes with `sqs-jobs queues create --name <queue> --tiers`/);
  });
});
