import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { createJobsApi } from '../../../src/http/api.js';
import { createProducer } from '../../../src/producer/producer.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import type { JobStore } from '../../../src/ports/job-store.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';

const sendEmail = defineJob({
  name: 'send-email',
  args: z.object({ userId: z.string().min(1), template: z.enum(['welcome', 'reset']).default('welcome') }),
  handle: () => {},
});
const internal = defineJob({ name: 'internal.cleanup', args: z.object({}), handle: () => {} });

function setup(o: { store?: JobStore | false; basePath?: string; maxMessageBytes?: number; lock?: MemoryLock } = {}) {
  const queue = new MemoryQueue();
  const queueUrl = queue.create('http-api');
  const store = o.store === false ? undefined : (o.store ?? new MemoryJobStore());
  const producer = createProducer(
    {
      queueUrl,
      queue,
      jobs: [sendEmail, internal],
      ...(store === undefined ? {} : { store }),
      ...(o.maxMessageBytes ? { maxMessageBytes: o.maxMessageBytes } : {}),
      ...(o.lock === undefined ? {} : { lock: o.lock }),
    },
    {},
  );
  const api = createJobsApi({ producer, jobs: [sendEmail], ...(o.basePath === undefined ? {} : { basePath: o.basePath }) });
  const call = (method: string, path: string, init: { body?: string; headers?: Record<string, string> } = {}) =>
    api.fetch(
      new Request(`http://api.test${path}`, {
        method,
        headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
        ...(init.body === undefined ? {} : { body: init.body }),
      }),
    );
  const sent = async () =>
    (await queue.receive(queueUrl, 10, 0, 0)).map((m) => JSON.parse(m.body) as { id: string; job: string; args: unknown });
  return { api, call, sent, store };
}

describe('POST /jobs/:name', () => {
  it('enqueues the job and answers 202 with its id, where to read its status, and a Location header', async () => {
    const { call, sent } = setup({ basePath: '/api' });
    const res = await call('POST', '/api/jobs/send-email', { body: JSON.stringify({ userId: 'u1' }) });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { jobId: string; statusUrl: string };
    expect(body.statusUrl).toBe(`/api/jobs/${body.jobId}`);
    expect(res.headers.get('location')).toBe(body.statusUrl);
    const messages = await sent();
    expect(messages).toEqual([expect.objectContaining({ id: body.jobId, job: 'send-email', args: { userId: 'u1', template: 'welcome' } })]);
  });

  it('answers 422 naming the field and its rule, and sends nothing', async () => {
    const { call, sent } = setup();
    const res = await call('POST', '/jobs/send-email', { body: JSON.stringify({ userId: '', template: 'spam' }) });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const p = (await res.json()) as { type: string; errors: { field: string; rule: string }[] };
    expect(p.type).toBe('tag:sqs-jobs,2026:args-invalid');
    expect(p.errors.map((e) => e.field).sort()).toEqual(['args.template', 'args.userId']);
    expect(await sent()).toEqual([]);
  });

  it('answers 404 for a job that is not offered, naming none of those that are', async () => {
    const { call } = setup();
    for (const name of ['nope', 'internal.cleanup']) {
      const res = await call('POST', `/jobs/${name}`, { body: '{}' });
      expect(res.status).toBe(404);
      expect(await res.text()).not.toMatch(/send-email/);
    }
  });

  it('answers 413 for a body over the limit, and for args whose message would be over it', async () => {
    const { call, sent } = setup({ maxMessageBytes: 1_024 });
    const big = await call('POST', '/jobs/send-email', { body: JSON.stringify({ userId: 'x'.repeat(5_000) }) });
    expect(big.status).toBe(413);
    const message = await call('POST', '/jobs/send-email', { body: JSON.stringify({ userId: 'x'.repeat(1_500) }) });
    expect(message.status).toBe(413);
    expect(((await message.json()) as { detail: string }).detail).toMatch(/over the limit of 1024 bytes/);
    expect(await sent()).toEqual([]);
  });

  it('answers 400 for a body that is not JSON, 415 for one that does not say it is', async () => {
    const { call } = setup();
    expect((await call('POST', '/jobs/send-email', { body: '{"userId":' })).status).toBe(400);
    const res = await call('POST', '/jobs/send-email', {
      body: 'userId=u1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
  });

  it('an Idempotency-Key becomes the job id: a retried POST enqueues once and answers 200 with the same id', async () => {
    const { call, sent } = setup();
    const post = () => call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers: { 'idempotency-key': 'order-42' } });
    const first = await post();
    expect(first.status).toBe(202);
    expect(await first.json()).toMatchObject({ jobId: 'order-42' });
    const again = await post();
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toMatchObject({ jobId: 'order-42', statusUrl: '/jobs/order-42' });
    expect((await sent()).map((m) => m.id)).toEqual(['order-42']);
  });

  it('refuses an Idempotency-Key that cannot be a job id (422), and one used for another job type (409)', async () => {
    const { call, store } = setup();
    const bad = await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers: { 'idempotency-key': 'has space' } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: { field: string }[] }).errors[0]?.field).toBe('header.Idempotency-Key');
    await store!.transition({ jobId: 'k1', jobName: 'other', state: 'waiting', attempt: 0, at: new Date() });
    const reused = await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers: { 'idempotency-key': 'k1' } });
    expect(reused.status).toBe(409);
  });

  it('checks the args before a replay: a retry with args the first could not have had is a 422, not a 200', async () => {
    // Found by schemathesis: `[null, null]` with a key used before was answered 200 with that job.
    const { call } = setup();
    const headers = { 'idempotency-key': 'order-43' };
    expect((await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers })).status).toBe(202);
    const res = await call('POST', '/jobs/send-email', { body: '[null, null]', headers });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ type: 'tag:sqs-jobs,2026:args-invalid' });
  });

  it("refuses, with a job store, an Idempotency-Key that is an offered job's name: its path serves POST only", async () => {
    const { call, sent } = setup();
    const res = await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers: { 'idempotency-key': 'send-email' } });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      errors: [{ field: 'header.Idempotency-Key', rule: 'must not be the name of a job offered here' }],
    });
    expect(await sent()).toEqual([]);
    // Without one there is no status to read: the key is only the job id.
    const bare = setup({ store: false });
    expect(
      (await bare.call('POST', '/jobs/send-email', { body: '{"userId":"u1"}', headers: { 'idempotency-key': 'send-email' } })).status,
    ).toBe(202);
  });

  it('answers 503 with Retry-After when SQS does not take the message', async () => {
    const queue = new MemoryQueue();
    const queueUrl = queue.create('down');
    queue.send = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { name: 'Error' });
    };
    const producer = createProducer({ queueUrl, queue, jobs: [sendEmail] }, {});
    const res = await createJobsApi({ producer }).fetch(
      new Request('http://api.test/jobs/send-email', {
        method: 'POST',
        body: '{"userId":"u1"}',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('takes enqueue options (a tenant) from the host, never from the body', async () => {
    const queue = new MemoryQueue();
    const queueUrl = queue.create('tenant');
    const producer = createProducer({ queueUrl, queue, jobs: [sendEmail] }, {});
    const api = createJobsApi({ producer, enqueueOptions: (req) => ({ tenant: req.headers.get('x-authenticated-org') ?? 'anonymous' }) });
    const res = await api.fetch(
      new Request('http://api.test/jobs/send-email', {
        method: 'POST',
        body: '{"userId":"u1"}',
        headers: { 'content-type': 'application/json', 'x-authenticated-org': 'acme' },
      }),
    );
    expect(res.status).toBe(202);
    const [m] = await queue.receive(queueUrl, 1, 0, 0);
    expect(JSON.parse(m!.body)).toMatchObject({ tenant: 'acme' });
  });
});

describe('GET /jobs/:id', () => {
  it("answers the job's status in the shape front ends poll: status, itemCount, itemProgress", async () => {
    const { call, store } = setup();
    const { jobId } = (await (await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}' })).json()) as { jobId: string };
    expect(await (await call('GET', `/jobs/${jobId}`)).json()).toMatchObject({ jobId, job: 'send-email', status: 'waiting', attempt: 0 });
    await store!.transition({ jobId, jobName: 'send-email', state: 'running', attempt: 1, at: new Date() });
    await store!.progress(jobId, { done: 3, total: 10 });
    const res = await call('GET', `/jobs/${jobId}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'running', attempt: 1, itemCount: 10, itemProgress: 3 });
  });

  it('answers 404 for a job it does not know, or an id that cannot be one', async () => {
    const { call } = setup();
    expect((await call('GET', '/jobs/never-seen')).status).toBe(404);
    expect((await call('GET', `/jobs/${'x'.repeat(200)}`)).status).toBe(404);
    expect((await call('GET', '/jobs/%E0%A4%A')).status).toBe(404);
  });

  it('answers 503 with Retry-After when the store does not answer', async () => {
    const store = new MemoryJobStore();
    store.get = async () => {
      throw new Error('DynamoDB: connect ETIMEDOUT');
    };
    const { call } = setup({ store });
    const res = await call('GET', '/jobs/some-job');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('without a job store: the POST answers the job id only, and status is a 404 that says why', async () => {
    const { call } = setup({ store: false });
    const res = await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}' });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBeNull();
    const { jobId } = (await res.json()) as { jobId: string };
    const status = await call('GET', `/jobs/${jobId}`);
    expect(status.status).toBe(404);
    expect(((await status.json()) as { detail: string }).detail).toMatch(/no job store/);
  });
});

describe('DELETE /jobs/:id', () => {
  it('cancels a waiting job: 202 with its status, and a worker that receives it reads cancelled', async () => {
    const lock = new MemoryLock();
    const { call } = setup({ lock });
    const { jobId } = (await (await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}' })).json()) as { jobId: string };
    const res = await call('DELETE', `/jobs/${jobId}`);
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ jobId, status: 'cancelled', reason: 'cancelled by request' });
    expect(await lock.claim(jobId, 't', 30, { messageId: 'm', receiveCount: 1 })).toBe('cancelled');
    // Again: the same answer (a retried DELETE is not an error).
    expect((await call('DELETE', `/jobs/${jobId}`)).status).toBe(202);
    expect(await (await call('GET', `/jobs/${jobId}`)).json()).toMatchObject({ status: 'cancelled' });
  });

  it('never acts on a job of a type it does not offer: 404, and it is not cancelled', async () => {
    const lock = new MemoryLock();
    const { call, store } = setup({ lock });
    await store!.transition({ jobId: 'cleanup-1', jobName: 'internal.cleanup', state: 'waiting', attempt: 0, at: new Date() });
    expect((await call('DELETE', '/jobs/cleanup-1')).status).toBe(404);
    expect((await store!.get('cleanup-1'))?.state).toBe('waiting');
    expect(await lock.claim('cleanup-1', 't', 30, { messageId: 'm', receiveCount: 1 })).toBe('claimed');
  });

  it('answers 409 for a job that has ended, 404 for one it does not know', async () => {
    const { call, store } = setup({ lock: new MemoryLock() });
    await store!.transition({ jobId: 'done-1', jobName: 'send-email', state: 'completed', attempt: 1, at: new Date() });
    const ended = await call('DELETE', '/jobs/done-1');
    expect(ended.status).toBe(409);
    expect(((await ended.json()) as { detail: string }).detail).toMatch(/has ended already \(completed\)/);
    expect((await call('DELETE', '/jobs/never-seen')).status).toBe(404);
    expect((await call('DELETE', `/jobs/${'x'.repeat(200)}`)).status).toBe(404);
  });

  it('answers 503 with Retry-After when memcached does not take the mark, and nothing is cancelled', async () => {
    const lock = Object.assign(new MemoryLock(), { down: true });
    const { call } = setup({ lock });
    const { jobId } = (await (await call('POST', '/jobs/send-email', { body: '{"userId":"u1"}' })).json()) as { jobId: string };
    const res = await call('DELETE', `/jobs/${jobId}`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await (await call('GET', `/jobs/${jobId}`)).json()).toMatchObject({ status: 'waiting' });
  });

  it('is not offered without the memcached workers read: 405, Allow without DELETE', async () => {
    const { call } = setup();
    const res = await call('DELETE', '/jobs/some-id');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('routing', () => {
  it('answers 405 with Allow for other methods, and 404 outside its base path', async () => {
    const { call, api } = setup({ basePath: '/api' });
    // Allow says what the OpenAPI document offers at the path (HEAD wherever GET is, and OPTIONS).
    const res = await call('PUT', '/api/jobs/send-email', { body: '{}' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await call('PATCH', '/api/jobs/some-id')).headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await call('POST', '/api/openapi.json')).headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect((await call('GET', '/jobs/x')).status).toBe(404);
    expect(api.handles('/api/jobs/x')).toBe(true);
    expect(api.handles('/other')).toBe(false);
  });

  it("serves only POST at an offered job's name, as OpenAPI matches a concrete path before {jobId}", async () => {
    const { call, api } = setup({ basePath: '/api' });
    for (const method of ['GET', 'HEAD', 'DELETE']) {
      const res = await call(method, '/api/jobs/send-email');
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    }
    expect(api.allows('/api/jobs/send-email')).toEqual(['POST']);
    // Any other segment is a job id; a POST there names a job type that is not offered.
    expect((await call('POST', '/api/jobs/some-id', { body: '{}' })).status).toBe(404);
    expect(api.allows('/api/jobs/some-id')).toEqual(['GET', 'HEAD']);
  });

  it('answers OPTIONS with 204 and Allow wherever something is served, and 404 where nothing is', async () => {
    const { call } = setup({ basePath: '/api' });
    for (const [path, allow] of [
      ['/api/jobs/send-email', 'POST, OPTIONS'],
      ['/api/jobs/some-id', 'GET, HEAD, OPTIONS'],
      ['/api/openapi.json', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const res = await call('OPTIONS', path);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('allow')).toBe(allow);
      expect(await res.text()).toBe('');
    }
    expect((await call('OPTIONS', '/api/jobs/')).status).toBe(404);
    // Without a job store no job id is a resource: nothing is served there.
    const bare = setup({ store: false, basePath: '/api' });
    expect((await bare.call('OPTIONS', '/api/jobs/some-id')).status).toBe(404);
    expect((await bare.call('PUT', '/api/jobs/some-id')).status).toBe(404);
  });

  it('answers HEAD as it answers GET (the server sends the headers only)', async () => {
    const { call } = setup({ basePath: '/api' });
    const [get, head] = await Promise.all([call('GET', '/api/openapi.json'), call('HEAD', '/api/openapi.json')]);
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect((await call('HEAD', '/api/jobs/never-seen')).status).toBe(404);
  });
});
