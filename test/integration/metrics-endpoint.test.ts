import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { GetMetricStatisticsCommand } from '@aws-sdk/client-cloudwatch';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsProxy } from '../../bench/lib/sqs-proxy.js';
import { createCloudWatchClient } from '../../src/adapters/aws-clients.js';
import type { Env } from '../../src/config/env.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { LOCAL_ENDPOINT, eventually, freshQueues, quietLogger, sqsClient } from '../helpers/stack.js';

/**
 * CloudWatch follows AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL: never the SQS-only
 * SQS_JOBS_ENDPOINT (issue 9, item 4). Two counting proxies in front of moto stand for "the SQS
 * server" and "the CloudWatch server", so the test sees which one each call went to.
 */
const sqs = sqsClient();
const cw = createCloudWatchClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
let sqsServer: SqsProxy;
let cloudwatchServer: SqsProxy;
const workers: Worker[] = [];

beforeAll(async () => {
  sqsServer = await SqsProxy.start(LOCAL_ENDPOINT);
  cloudwatchServer = await SqsProxy.start(LOCAL_ENDPOINT);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  sqsServer.resetCounts();
  cloudwatchServer.resetCounts();
});
afterAll(async () => {
  sqs.destroy();
  cw.destroy();
  await sqsServer.close();
  await cloudwatchServer.close();
});

const CLOUDWATCH_ACTIONS = ['PutMetricData', 'GetMetricData', 'GetMetricStatistics', 'ListMetrics'];
const isCloudWatch = (action: string) => CLOUDWATCH_ACTIONS.includes(action);
const credentials = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test', AWS_REGION: 'us-east-1' };

async function succeededCount(namespace: string, queue: string): Promise<number> {
  const out = await cw.send(
    new GetMetricStatisticsCommand({
      Namespace: namespace,
      MetricName: 'Succeeded',
      Dimensions: [
        { Name: 'Job', Value: 'ping' },
        { Name: 'Queue', Value: queue },
      ],
      StartTime: new Date(Date.now() - 3_600_000),
      EndTime: new Date(Date.now() + 600_000),
      Period: 3_600,
      Statistics: ['Sum'],
    }),
  );
  return (out.Datapoints ?? []).reduce((n, d) => n + (d.Sum ?? 0), 0);
}

async function runOnePing(env: Env, namespace: string): Promise<string> {
  const { queueUrl } = await freshQueues(sqs, 'cw-endpoint');
  const ping = defineJob({ name: 'ping', args: z.object({}), handle: () => {} });
  const producer = createProducer({ queueUrl, endpoint: LOCAL_ENDPOINT }, credentials);
  await producer.enqueue(ping, {});
  producer.close();
  const worker = createWorker(
    {
      queues: [queueUrl],
      jobs: [ping],
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 4,
      handleSignals: false,
      logger: quietLogger,
      metrics: { sink: 'cloudwatch', namespace },
    },
    env,
  );
  workers.push(worker);
  let done = 0;
  worker.on('job:succeeded', () => done++);
  await worker.start();
  await eventually(() => done === 1, 'the job ran');
  await worker.stop(); // flushes metrics
  return queueUrl.split('/').pop()!;
}

describe('the CloudWatch endpoint', () => {
  it('a worker with SQS_JOBS_ENDPOINT on the SQS server sends PutMetricData to AWS_ENDPOINT_URL, not to SQS', async () => {
    const namespace = `SqsJobsTest/${randomUUID().slice(0, 8)}`;
    const queue = await runOnePing({ ...credentials, SQS_JOBS_ENDPOINT: sqsServer.url, AWS_ENDPOINT_URL: cloudwatchServer.url }, namespace);
    expect(sqsServer.total(isCloudWatch), `CloudWatch calls sent to the SQS endpoint: ${JSON.stringify(sqsServer.counts())}`).toBe(0);
    expect(sqsServer.total((a) => a === 'ReceiveMessage')).toBeGreaterThan(0);
    expect(cloudwatchServer.counts().PutMetricData).toBeGreaterThanOrEqual(1);
    expect(await succeededCount(namespace, queue)).toBe(1);
  });

  it('AWS_ENDPOINT_URL_CLOUDWATCH wins over AWS_ENDPOINT_URL, which then serves SQS', async () => {
    const namespace = `SqsJobsTest/${randomUUID().slice(0, 8)}`;
    await runOnePing({ ...credentials, AWS_ENDPOINT_URL: sqsServer.url, AWS_ENDPOINT_URL_CLOUDWATCH: cloudwatchServer.url }, namespace);
    expect(sqsServer.total(isCloudWatch)).toBe(0);
    expect(cloudwatchServer.counts().PutMetricData).toBeGreaterThanOrEqual(1);
    expect(
      cloudwatchServer.total((a) => !isCloudWatch(a)),
      'no SQS call on the CloudWatch endpoint',
    ).toBe(0);
  });

  it('the metrics.endpoint option wins over both variables', async () => {
    const namespace = `SqsJobsTest/${randomUUID().slice(0, 8)}`;
    const { queueUrl } = await freshQueues(sqs, 'cw-endpoint');
    const ping = defineJob({ name: 'ping', args: z.object({}), handle: () => {} });
    const worker = createWorker(
      {
        queues: [queueUrl],
        jobs: [ping],
        handleSignals: false,
        logger: quietLogger,
        metrics: { sink: 'cloudwatch', namespace, endpoint: cloudwatchServer.url },
      },
      { ...credentials, AWS_ENDPOINT_URL: sqsServer.url, AWS_ENDPOINT_URL_CLOUDWATCH: sqsServer.url },
    );
    expect(worker.config.metrics.cloudwatch?.endpoint).toBe(cloudwatchServer.url);
    expect(worker.config.aws.endpoint).toBe(sqsServer.url);
  });

  it('sqs-jobs stats reads SQS from SQS_JOBS_ENDPOINT and CloudWatch from AWS_ENDPOINT_URL_CLOUDWATCH', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cw-stats');
    const env = {
      PATH: process.env.PATH,
      ...credentials,
      SQS_JOBS_ENDPOINT: sqsServer.url,
      AWS_ENDPOINT_URL_CLOUDWATCH: cloudwatchServer.url,
    };
    const { stdout } = await promisify(execFile)('node_modules/.bin/tsx', ['src/cli/main.ts', 'stats', '--queue', queueUrl, '--json'], {
      env,
    });
    expect(JSON.parse(stdout).queues[0].visible).toBe(0);
    expect(sqsServer.total(isCloudWatch), JSON.stringify(sqsServer.counts())).toBe(0);
    expect(cloudwatchServer.total(isCloudWatch)).toBeGreaterThan(0);
    expect(cloudwatchServer.total((a) => !isCloudWatch(a))).toBe(0);
  });
});
