import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { GetMetricStatisticsCommand, ListMetricsCommand, type Statistic } from '@aws-sdk/client-cloudwatch';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createCloudWatchClient } from '../../src/adapters/aws-clients.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { CloudWatchSink } from '../../src/adapters/cloudwatch-sink.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { freePort } from '../helpers/memcached.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
const cw = createCloudWatchClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
afterAll(() => {
  sqs.destroy();
  cw.destroy();
});
const start = useWorkers();

async function stat(namespace: string, metric: string, job: string, queue: string, statistic: Statistic): Promise<number | undefined> {
  const out = await cw.send(
    new GetMetricStatisticsCommand({
      Namespace: namespace,
      MetricName: metric,
      Dimensions: [
        { Name: 'Job', Value: job },
        { Name: 'Queue', Value: queue },
      ],
      StartTime: new Date(Date.now() - 3_600_000),
      EndTime: new Date(Date.now() + 600_000),
      Period: 3_600,
      Statistics: [statistic],
    }),
  );
  if (!out.Datapoints?.length) return undefined;
  return out.Datapoints.reduce((n, d) => n + (d[statistic] ?? 0), 0);
}

describe('CloudWatch metrics per job type', () => {
  it('publishes counts and timings that match what ran, read back from CloudWatch', async () => {
    const namespace = `SqsJobsTest/${randomUUID().slice(0, 8)}`;
    const { queueUrl } = await freshQueues(sqs, 'metrics', { maxReceiveCount: 3 });
    const queue = queueUrl.split('/').pop()!;
    const ok = defineJob({ name: 'ok', args: z.object({}), handle: () => {} });
    const flaky = defineJob({
      name: 'flaky',
      args: z.object({}),
      backoff: { baseMs: 1_000, jitter: 0 },
      handle: (_a, ctx) => {
        if (ctx.attempt === 1) throw new Error('first try fails');
      },
    });
    const doomed = defineJob({ name: 'doomed', args: z.object({}), handle: () => Promise.reject(new UnrecoverableError('no')) });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(ok, [{}, {}, {}, {}, {}]);
    await producer.enqueueMany(flaky, [{}, {}]);
    await producer.enqueue(doomed, {});
    await producer.enqueue(ok, {}, { jobId: 'twice' });
    const worker = start({
      queues: [queueUrl],
      jobs: [ok, flaky, doomed],
      metrics: { sink: 'cloudwatch', namespace, flushIntervalMs: 60_000 },
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 8 && events.count('job:dead-lettered') === 1, 'all jobs to end', 30_000);
    await producer.enqueue(ok, {}, { jobId: 'twice' });
    await eventually(() => events.count('job:duplicate') === 1, 'the duplicate');
    await worker.stop(); // flushes

    expect(await stat(namespace, 'Succeeded', 'ok', queue, 'Sum')).toBe(6);
    expect(await stat(namespace, 'Succeeded', 'flaky', queue, 'Sum')).toBe(2);
    expect(await stat(namespace, 'Failed', 'flaky', queue, 'Sum')).toBe(2);
    expect(await stat(namespace, 'Retried', 'flaky', queue, 'Sum')).toBe(2);
    expect(await stat(namespace, 'Failed', 'doomed', queue, 'Sum')).toBe(1);
    expect(await stat(namespace, 'DeadLettered', 'doomed', queue, 'Sum')).toBe(1);
    expect(await stat(namespace, 'DuplicatesSkipped', 'ok', queue, 'Sum')).toBe(1);
    // every start has a WaitTime sample, every handler run a ProcessTime sample
    expect(await stat(namespace, 'WaitTime', 'ok', queue, 'SampleCount')).toBe(6);
    expect(await stat(namespace, 'WaitTime', 'flaky', queue, 'SampleCount')).toBe(4);
    expect(await stat(namespace, 'ProcessTime', 'flaky', queue, 'SampleCount')).toBe(4);
    const waitSum = await stat(namespace, 'WaitTime', 'ok', queue, 'Sum');
    const expectedWait = events
      .of('job:start')
      .filter((e) => e.jobName === 'ok')
      .reduce((n, e) => n + e.waitMs, 0);
    expect(Math.abs(waitSum! - expectedWait) / expectedWait).toBeLessThan(0.06); // buckets are within ~5%
    const listed = await cw.send(new ListMetricsCommand({ Namespace: namespace }));
    expect(new Set(listed.Metrics?.map((m) => m.MetricName))).toEqual(
      new Set(['WaitTime', 'ProcessTime', 'Succeeded', 'Failed', 'Retried', 'DeadLettered', 'DuplicatesSkipped']),
    );
    producer.close();
  });

  it('keeps processing when CloudWatch cannot be reached, and says so once per flush', async () => {
    const { queueUrl } = await freshQueues(sqs, 'nocw');
    const job = defineJob({ name: 'j', args: z.object({}), handle: () => {} });
    const unreachable = createCloudWatchClient({ endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1' }, {}, {});
    const logs: string[] = [];
    const logger = pino(
      { level: 'warn' },
      new Writable({
        write: (chunk, _e, cb) => {
          logs.push(String(chunk));
          cb();
        },
      }),
    );
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(job, [{}, {}, {}]);
    const worker = start({
      queues: [queueUrl],
      jobs: [job],
      logger,
      metrics: { sink: new CloudWatchSink(unreachable), flushIntervalMs: 1_000 },
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 3, 'jobs to run despite CloudWatch');
    await eventually(() => logs.some((l) => l.includes('could not publish metrics')), 'the warning', 20_000);
    await worker.stop();
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    unreachable.destroy();
    producer.close();
  });
});
