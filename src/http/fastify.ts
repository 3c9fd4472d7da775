import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Mountable } from './mountable.js';
import { answer, pathOf } from './node.js';
import { problem } from './responses.js';

/** The parts of Fastify this adapter uses (so sqs-jobs needs no Fastify types). */
interface FastifyLike {
  readonly supportedMethods: readonly string[];
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    parser: (request: unknown, payload: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  setErrorHandler(handler: (error: Error & { code?: string }, request: RequestLike, reply: ReplyLike) => Promise<unknown>): unknown;
  route(options: { method: string[]; url: string; handler: (request: RequestLike, reply: ReplyLike) => Promise<unknown> }): unknown;
}

interface RequestLike {
  readonly raw: IncomingMessage;
  readonly body?: unknown;
}

interface ReplyLike {
  readonly raw: ServerResponse;
  code(status: number): ReplyLike;
  header(name: string, value: string): ReplyLike;
  send(body?: unknown): ReplyLike;
}

/**
 * Requests Fastify refuses in its own shape before any handler runs: a QUERY without a
 * content-type (RFC 10008), a body whose content-type is not a media type. The API answers them.
 */
const REFUSED_BY_FASTIFY = new Set(['FST_ERR_ROUTE_MISSING_CONTENT_TYPE', 'FST_ERR_CTP_INVALID_MEDIA_TYPE']);

/**
 * The API as a Fastify plugin: `await app.register(fastifyPlugin(api))`. Inside the plugin the body
 * is left to the API (Fastify's own parsers are removed there only), so size limits and errors
 * are the API's own answers. Its paths take every method this Fastify routes (`app.supportedMethods`,
 * with any added by `app.addHttpMethod` before the plugin is registered): the API answers the
 * methods it does not serve with 405 and `Allow`, as on every adapter.
 */
export function fastifyPlugin(api: Mountable) {
  const plugin = async (fastify: FastifyLike): Promise<void> => {
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    const handler = async (request: RequestLike, reply: ReplyLike) => {
      // Fastify hands the payload stream (the request, or what a hook made of it) to the parser above.
      const stream = request.body instanceof Readable ? request.body : undefined;
      return send(reply, request.raw, await answer(api, request.raw, stream));
    };
    // Only in this plugin's routes; any other error (a host's hook, say) goes on to the host's handler.
    fastify.setErrorHandler(async (error, request, reply) => {
      if (!REFUSED_BY_FASTIFY.has(error.code ?? '')) throw error;
      const path = pathOf(request.raw);
      const method = request.raw.method ?? '';
      const type = JSON.stringify(request.raw.headers['content-type'] ?? 'none');
      const refused = api.allows(path).includes(method)
        ? problem(415, 'unsupported-media-type', `the body must be JSON with content-type application/json (got ${type})`)
        : api.refuse(path, method);
      return send(reply, request.raw, refused);
    });
    for (const url of api.routes) fastify.route({ method: [...fastify.supportedMethods], url, handler });
  };
  return plugin;
}

/** Write the API's answer through Fastify's reply. */
async function send(reply: ReplyLike, req: IncomingMessage, response: Response): Promise<ReplyLike> {
  reply.code(response.status);
  for (const [name, value] of response.headers) reply.header(name, value);
  // A body not read whole (refused for its size): the rest must not be read as the next request.
  if (!req.complete) reply.header('connection', 'close');
  return reply.send(response.body === null ? undefined : Buffer.from(await response.arrayBuffer()));
}
