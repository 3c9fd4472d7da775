import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { MetricPoint } from '../../src/ports/metrics-sink.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/**
 * Every queue URL form AWS and the emulators hand out works end to end: the producer sends with
 * it, a worker receives, runs and deletes with it, finds the DLQ from its redrive policy, and
 * names the queue in metrics and in `sqs-jobs stats` (issue 9, item 7). The servers find the queue
 * whatever the URL's shape (the endpoint decides where requests go; the URL names the queue).
 */
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

/** The same queue under each form, from the URL the server returned (e.g. http://127.0.0.1:4566/123456789012/jobs). */
function forms(motoUrl: string): [string, string][] {
  const { port, pathname } = new URL(motoUrl);
  const [account, name] = pathname.split('/').slice(-2);
  return [
    ['as the server returned it', motoUrl],
    ['loopback (moto, LocalStack "off", ElasticMQ)', `http://127.0.0.1:${port}/${account}/${name}`],
    ['localhost', `http://localhost:${port}/${account}/${name}`],
    ['AWS (moto like AWS)', `https://sqs.us-east-1.amazonaws.com/${account}/${name}`],
    ['LocalStack path strategy', `http://127.0.0.1:${port}/queue/us-east-1/${account}/${name}`],
    ['LocalStack dynamic strategy', `http://sqs.us-east-1.localhost.localstack.cloud:${port}/${account}/${name}`],
  ];
}

function capturingSink() {
  const points: MetricPoint[] = [];
  return { points, sink: { publish: async (_namespace: string, data: readonly MetricPoint[]) => void points.push(...data) } };
}

describe('queue URL forms', () => {
  it.each([false, true])('producer and worker work with every form (FIFO: %s)', async (fifo) => {
    const pair = await freshQueues(sqs, 'url-forms', fifo ? { name: 'x.fifo' } : {});
    const name = pair.queueUrl.split('/').pop();
    const seen: { form: string; queueUrl: string }[] = [];
    const echo = defineJob({
      name: 'echo',
      args: z.object({ form: z.string() }),
      handle: (args, ctx) => void seen.push({ form: args.form, queueUrl: ctx.queueUrl }),
    });

    for (const [form, url] of forms(pair.queueUrl)) {
      const producer = createProducer({ queueUrl: url }, LOCAL_ENV);
      await producer.enqueue(echo, { form }, fifo ? { groupId: 'g' } : {});
      producer.close();

      const metrics = capturingSink();
      const worker = start({ queues: [url], jobs: [echo], metrics: { sink: metrics.sink, flushIntervalMs: 1_000 } });
      const events = recordEvents(worker);
      await worker.start(); // reads the redrive policy through this URL
      await eventually(() => events.count('job:succeeded') === 1, `the job sent with the ${form} URL ran`);
      await worker.stop();
      expect(seen.at(-1), form).toEqual({ form, queueUrl: url });
      const queues = new Set(metrics.points.map((p) => p.dimensions.Queue));
      expect([...queues], `${form}: metrics name the queue`).toEqual([name]);
    }
    expect(seen).toHaveLength(6);
    expect(await queueCounts(sqs, pair.queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('sqs-jobs stats and dlq list take the LocalStack forms', async () => {
    const pair = await freshQueues(sqs, 'url-forms-cli');
    const [, , , , path, dynamic] = forms(pair.queueUrl).map(([, url]) => url);
    const cli = (args: string[]) =>
      promisify(execFile)('node_modules/.bin/tsx', ['src/cli/main.ts', ...args], { env: { ...process.env, ...LOCAL_ENV } });
    const stats = JSON.parse((await cli(['stats', '--queue', dynamic!, '--json'])).stdout) as {
      queues: { name: string; dlq?: { name: string } }[];
    };
    expect(stats.queues[0]?.name).toBe(pair.queueUrl.split('/').pop());
    expect(stats.queues[0]?.dlq?.name).toBe(pair.dlqUrl.split('/').pop());
    expect((await cli(['dlq', 'list', '--queue', path!])).stdout).toMatch(/the dead-letter queue is empty/);
  });
});
