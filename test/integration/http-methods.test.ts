import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import type { JobsApi } from '../../src/http/api.js';
import { createJobsApi, fastifyPlugin } from '../../src/http/index.js';
import { createProducer, type Producer } from '../../src/producer/producer.js';
import { adapters } from '../helpers/http-adapters.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, freshQueues, sqsClient } from '../helpers/stack.js';

// Every method each route does not serve, sent through every mount docs/guide/http-api.md shows: 405 with
// `Allow` (RFC 9110 §15.5.6) in the API's problem shape, the same on each adapter; OPTIONS 204 with
// `Allow`; HEAD answered as GET with no content on the wire. Plain requests: schemathesis
// (http-fuzz.test.ts) samples some of these, this sends them all.

const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const resize = defineJob({ name: 'resize', args: z.object({ imageId: z.string().min(1) }), handle: () => {} });
let producer: Producer;
let api: JobsApi;

beforeAll(async () => {
  const table = `methods-${randomUUID().slice(0, 8)}`;
  await createJobTable(dynamo, table);
  const { queueUrl } = await freshQueues(sqs, 'http-methods');
  // A job store and the workers' memcached (LOCAL_ENV): GET and DELETE are served at a job id.
  producer = createProducer({ queueUrl, jobs: [resize], store: { table, endpoint: LOCAL_DYNAMODB } }, LOCAL_ENV);
  api = createJobsApi({ producer, basePath: '/api' });
  expect(producer.cancellable).toBe(true);
});
afterAll(() => {
  producer?.close();
  sqs.destroy();
  dynamo.destroy();
});

/** Each route of the OpenAPI document, and what `Allow` says is served there. */
const ROUTES = [
  { path: '/api/jobs/resize', allow: 'POST, OPTIONS' },
  { path: '/api/jobs/a-job-id', allow: 'GET, HEAD, DELETE, OPTIONS' },
  { path: '/api/openapi.json', allow: 'GET, HEAD, OPTIONS' },
];
/**
 * Methods sent to each route. QUERY without a content-type, which Fastify refuses by itself (RFC
 * 10008); TRACE, which a web-standard Request cannot carry. Fastify routes only the methods it
 * knows (PROPFIND among the others, below).
 */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'QUERY'];

describe.each(Object.keys(adapters) as (keyof typeof adapters)[])('on %s', (name) => {
  let base: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ url: base, close } = await adapters[name](api));
  });
  afterAll(() => close());

  it.each(ROUTES)('$path: 405 with Allow "$allow" for every method not served there', async ({ path, allow }) => {
    const served = allow.split(', ');
    // POST at a job id names a job type, and none of that name is offered: the documented 404.
    const unserved = METHODS.filter((m) => !served.includes(m) && !(m === 'POST' && path.endsWith('a-job-id')));
    expect(unserved.length).toBeGreaterThan(3);
    for (const method of unserved) {
      const res = await send(base, method, path);
      expect({ method, status: res.status }).toEqual({ method, status: 405 });
      expect(res.headers.allow, method).toBe(allow);
      if (method !== 'HEAD') {
        expect(res.headers['content-type'], method).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(res.body), method).toMatchObject({ type: 'tag:sqs-jobs,2026:method-not-allowed', status: 405 });
      }
    }
  });

  it.each(ROUTES)('$path: OPTIONS answers 204 with Allow "$allow"', async ({ path, allow }) => {
    const res = await send(base, 'OPTIONS', path);
    expect(res.status).toBe(204);
    expect(res.headers.allow).toBe(allow);
    expect(res.body).toBe('');
  });

  it('HEAD answers as GET does (status and headers), with no content on the wire', async () => {
    for (const path of ['/api/openapi.json', '/api/jobs/never-seen']) {
      const get = await send(base, 'GET', path);
      const head = await rawHead(base, path);
      expect(head.status, path).toBe(get.status);
      expect(head.headers['content-type'], path).toBe(get.headers['content-type']);
      // What follows HEAD's headers on the connection is the next answer, not content.
      expect(head.after, path).toMatch(/^HTTP\/1\.1 \d{3} /);
      if (head.headers['content-length'] !== undefined) expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
    }
  });

  it('where nothing is served, any method is a 404; a body the API cannot read is its own 415', async () => {
    for (const method of ['GET', 'PUT', 'OPTIONS']) expect((await send(base, method, '/api/jobs/')).status, method).toBe(404);
    // Not a media type at all: Fastify refuses it before any handler; the answer is still the API's.
    const res = await send(base, 'POST', '/api/jobs/resize', { 'content-type': 'x' }, '{"imageId":"i"}');
    expect(res.status).toBe(415);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await send(base, 'GET', '/health')).body).toBe('ok');
  });
});

describe('fastify, methods beyond the ones it routes', () => {
  it('answers them with its own 404 unless added with addHttpMethod before the plugin; then 405 with Allow', async () => {
    for (const added of [false, true]) {
      const app = Fastify();
      if (added) app.addHttpMethod('PROPFIND', { hasBody: true });
      await app.register(fastifyPlugin(api));
      await app.listen({ host: '127.0.0.1', port: 0 });
      const res = await send(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, 'PROPFIND', '/api/openapi.json');
      await app.close();
      expect(res.status).toBe(added ? 405 : 404);
      expect(res.headers.allow).toBe(added ? 'GET, HEAD, OPTIONS' : undefined);
    }
  });

  it('other adapters take any method Node parses', async () => {
    const { url, close } = await adapters.hono(api);
    const { url: nodeUrl, close: closeNode } = await adapters['node:http'](api);
    try {
      for (const base of [url, nodeUrl])
        expect((await send(base, 'PROPFIND', '/api/openapi.json')).headers.allow).toBe('GET, HEAD, OPTIONS');
    } finally {
      await close();
      await closeNode();
    }
  });
});

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: string;
}

/** One request with any method Node's client sends (fetch refuses TRACE); no keep-alive. */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers: { connection: 'close', ...headers }, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Answer['headers'], body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** HEAD, then GET /health on the same connection, read as bytes: what the server wrote after HEAD's headers. */
function rawHead(base: string, path: string): Promise<Answer & { readonly after: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `HEAD ${path} HTTP/1.1\r\nHost: ${hostname}\r\n\r\nGET /health HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`,
      );
    });
    let raw = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (raw += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const end = raw.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const at = line.indexOf(':');
        headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
      }
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: '', after: raw.slice(end + 4) });
    });
  });
}
