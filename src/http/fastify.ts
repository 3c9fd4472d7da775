import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Mountable } from './mountable.js';
import { toRequest } from './node.js';

/** The parts of Fastify this adapter uses (so sqs-jobs needs no Fastify types). */
interface FastifyLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (request: { raw: IncomingMessage; body?: unknown }, reply: ReplyLike) => Promise<unknown>;
  }): unknown;
}

interface ReplyLike {
  readonly raw: ServerResponse;
  code(status: number): ReplyLike;
  header(name: string, value: string): ReplyLike;
  send(body?: unknown): ReplyLike;
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The API as a Fastify plugin: `await app.register(fastifyPlugin(api))`. Inside the plugin the body
 * is left to the API (Fastify's own parsers are removed there only), so size limits and errors
 * are the API's own answers.
 */
export function fastifyPlugin(api: Mountable) {
  const plugin = async (fastify: FastifyLike): Promise<void> => {
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const handler = async (request: { raw: IncomingMessage; body?: unknown }, reply: ReplyLike) => {
      // Fastify hands the payload stream (the request, or what a hook made of it) to the parser above.
      const stream = request.body instanceof Readable ? request.body : undefined;
      const req = toRequest(request.raw, stream);
      const response = await api.fetch(req);
      reply.code(response.status);
      for (const [name, value] of response.headers) reply.header(name, value);
      // A body not read whole (refused for its size): the rest must not be read as the next request.
      if (!request.raw.complete) reply.header('connection', 'close');
      return reply.send(response.body === null ? undefined : Buffer.from(await response.arrayBuffer()));
    };
    for (const url of api.routes) fastify.route({ method: METHODS, url, handler });
  };
  return plugin;
}
