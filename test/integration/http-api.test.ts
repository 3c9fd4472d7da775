import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import type { JobsApi } from '../../src/http/api.js';
import { createJobsApi } from '../../src/http/index.js';
import { createProducer, type Producer } from '../../src/producer/producer.js';
import type { Worker } from '../../src/worker/worker.js';
import { type AdapterName, adapters } from '../helpers/http-adapters.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, sqsClient } from '../helpers/stack.js';
import { testWorker } from '../helpers/worker.js';

// The HTTP API mounted in each server it has an adapter for (the real frameworks), in front of a
// producer on the local stack, a job store on DynamoDB Local and a worker that runs the jobs.

const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `http-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const runs = new Map<string, number>();
/** The code each cancelled handler's signal fired with. */
const signalled = new Map<string, string | undefined>();
const resize = defineJob({
  name: 'resize',
  args: z.object({ imageId: z.string().min(1), width: z.number().int().positive().max(4_096) }),
  handle: async (a, ctx) => {
    runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
    ctx.progress(1, 2);
    if (a.imageId === 'hold') {
      // Runs until cancelled: what a long job that honours its signal does.
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      signalled.set(ctx.jobId, (ctx.signal.reason as { code?: string }).code);
      throw ctx.signal.reason;
    }
    return { key: `${a.imageId}@${a.width}` };
  },
});
let producer: Producer;
let api: JobsApi;
let worker: Worker;

beforeAll(async () => {
  await createJobTable(dynamo, table);
  const { queueUrl } = await freshQueues(sqs, 'http-api');
  // The producer marks cancels where the worker looks: the same memcached, the same key prefix.
  const lockKeyPrefix = `http-${randomUUID().slice(0, 8)}:`;
  producer = createProducer({ queueUrl, jobs: [resize], store, lockKeyPrefix }, LOCAL_ENV);
  api = createJobsApi({ producer, basePath: '/api' });
  worker = testWorker({ queues: [queueUrl], jobs: [resize], store, lockKeyPrefix, progressIntervalMs: 100 });
  await worker.start();
});
afterAll(async () => {
  await worker?.stop();
  producer?.close();
  sqs.destroy();
  dynamo.destroy();
});

/** Each way of serving the API the docs show (test/helpers/http-adapters.ts), with a route of the host's own beside it. */
const MOUNTS: readonly AdapterName[] = ['node:http', 'express', 'express under /api, after express.json()', 'fastify', 'hono'];

describe.each(MOUNTS)('the HTTP API on %s', (name) => {
  let base: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ url: base, close } = await adapters[name](api));
  });
  afterAll(() => close());
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(base + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  it('202 with a Location; the status read there goes from waiting to completed with the result', async () => {
    const res = await post('/api/jobs/resize', JSON.stringify({ imageId: 'img-1', width: 640 }));
    expect(res.status).toBe(202);
    const { jobId, statusUrl } = (await res.json()) as { jobId: string; statusUrl: string };
    expect(res.headers.get('location')).toBe(statusUrl);
    const done = await eventually(async () => {
      const s = (await (await fetch(base + statusUrl)).json()) as { status: string };
      return s.status === 'completed' ? s : undefined;
    }, 'the job to complete');
    expect(done).toMatchObject({ jobId, job: 'resize', attempt: 1, itemCount: 2, itemProgress: 1, result: { key: 'img-1@640' } });
    expect(runs.get(jobId)).toBe(1);
  });

  it('422 names the field and its rule; 413 for a body over the limit; 404 for a job not offered', async () => {
    const bad = await post('/api/jobs/resize', JSON.stringify({ imageId: 'img-2', width: -3 }));
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ errors: [{ field: 'args.width', rule: expect.stringMatching(/>0|positive|greater/i) }] });
    const big = await post('/api/jobs/resize', JSON.stringify({ imageId: 'x'.repeat(200_000), width: 1 }));
    expect(big.status).toBe(413);
    expect((await post('/api/jobs/other', '{}')).status).toBe(404);
  });

  it('a POST retried with the same Idempotency-Key is enqueued and run once', async () => {
    const key = `order-${randomUUID()}`;
    const body = JSON.stringify({ imageId: 'img-3', width: 100 });
    const first = await post('/api/jobs/resize', body, { 'idempotency-key': key });
    expect(first.status).toBe(202);
    const again = await post('/api/jobs/resize', body, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ jobId: key });
    await eventually(
      async () => ((await (await fetch(`${base}/api/jobs/${key}`)).json()) as { status: string }).status === 'completed',
      'completed',
    );
    expect(runs.get(key)).toBe(1);
  });

  it('DELETE cancels a running job: 202, its signal fires, it reads cancelled and is not run again; 409 once ended', async () => {
    const { jobId, statusUrl } = (await (await post('/api/jobs/resize', JSON.stringify({ imageId: 'hold', width: 1 }))).json()) as {
      jobId: string;
      statusUrl: string;
    };
    const read = async () => (await (await fetch(base + statusUrl)).json()) as { status: string; attempt: number };
    await eventually(async () => (await read()).status === 'running', 'running');
    const res = await fetch(base + statusUrl, { method: 'DELETE' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ jobId, status: 'cancelled' });
    await eventually(() => signalled.has(jobId), 'the handler to see its signal');
    expect(signalled.get(jobId)).toBe('CANCELLED');
    expect(await read()).toMatchObject({ status: 'cancelled', attempt: 1 });
    expect(runs.get(jobId)).toBe(1);
    const done = (await (await post('/api/jobs/resize', JSON.stringify({ imageId: 'img-9', width: 9 }))).json()) as { statusUrl: string };
    await eventually(
      async () => ((await (await fetch(base + done.statusUrl)).json()) as { status: string }).status === 'completed',
      'completed',
    );
    expect((await fetch(base + done.statusUrl, { method: 'DELETE' })).status).toBe(409);
  });

  it("serves the OpenAPI document, and leaves the host's own routes alone", async () => {
    const doc = (await (await fetch(`${base}/api/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/jobs/resize', '/api/jobs/{jobId}', '/api/openapi.json']);
    const health = await fetch(`${base}/health`);
    expect(await health.text()).toBe('ok');
  });
});

describe('the HTTP API with a key from enqueueOptions', () => {
  it('answers what the key did: the first POST of a window sent, the next throttled with the window’s job id', async () => {
    const key = `acct-${randomUUID().slice(0, 8)}`;
    const keyed = createJobsApi({ producer, basePath: '/keyed', enqueueOptions: () => ({ throttle: { key, windowSeconds: 60 } }) });
    const { url, close } = await adapters['node:http'](keyed);
    try {
      const post = async () => {
        const res = await fetch(`${url}/keyed/jobs/resize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ imageId: 'img-k', width: 64 }),
        });
        return { status: res.status, body: (await res.json()) as { jobId: string; key?: string } };
      };
      const first = await post();
      const second = await post();
      expect(first).toMatchObject({ status: 202, body: { key: 'sent' } });
      expect(second).toEqual({
        status: 202,
        body: { jobId: first.body.jobId, statusUrl: `/keyed/jobs/${first.body.jobId}`, key: 'throttled' },
      });
    } finally {
      await close();
    }
  });
});
