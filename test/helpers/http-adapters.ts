import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { fastifyPlugin, honoHandler, nodeHandler } from '../../src/http/index.js';
import type { Mountable } from '../../src/http/mountable.js';

/** A server listening on loopback: its origin (`http://127.0.0.1:<port>`) and how to stop it. */
export interface Served {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The HTTP API (or the dashboard) mounted in each server docs/guide/http-api.md names, exactly as its
 * table shows, with the real framework, for an API whose basePath is `/api`. Each has a route of
 * the host's own beside it (`GET /health` answers "ok"), which the API must leave alone.
 */
export const adapters = {
  /** `http.createServer(nodeHandler(api))`. */
  'node:http': (api: Mountable) => {
    const handle = nodeHandler(api);
    return listen(createServer((req, res) => (req.url === '/health' ? res.end('ok') : handle(req, res))));
  },
  /** `app.use(nodeHandler(api))`. */
  express: (api: Mountable) => {
    const app = express();
    app.get('/health', (_req, res) => {
      res.send('ok');
    });
    app.use(nodeHandler(api));
    return listen(createServer(app));
  },
  /** `app.use('/api', nodeHandler(api))`: Express strips the prefix from req.url, the API reads originalUrl. */
  'express under /api': (api: Mountable) => {
    const app = express();
    app.get('/health', (_req, res) => {
      res.send('ok');
    });
    app.use('/api', nodeHandler(api));
    return listen(createServer(app));
  },
  /** `app.use(express.json())` before `app.use('/api', nodeHandler(api))`: the API gets the parsed body. */
  'express under /api, after express.json()': (api: Mountable) => {
    const app = express();
    app.use(express.json());
    app.get('/health', (_req, res) => {
      res.send('ok');
    });
    app.use('/api', nodeHandler(api));
    return listen(createServer(app));
  },
  /** `await app.register(fastifyPlugin(api))`. */
  fastify: async (api: Mountable): Promise<Served> => {
    const app = Fastify();
    app.get('/health', async () => 'ok');
    await app.register(fastifyPlugin(api));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
  /** `app.all('/api/*', honoHandler(api))`, served by @hono/node-server. */
  hono: async (api: Mountable): Promise<Served> => {
    const app = new Hono();
    app.get('/health', (c) => c.text('ok'));
    app.all('/api/*', honoHandler(api));
    const server = await new Promise<Server>((resolve) => {
      const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
    });
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
  },
} satisfies Record<string, (api: Mountable) => Promise<Served>>;

export type AdapterName = keyof typeof adapters;

async function listen(server: Server): Promise<Served> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}
