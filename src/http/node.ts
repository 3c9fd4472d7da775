import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { Mountable } from './mountable.js';
import { problem } from './responses.js';

/** What Express adds to Node's request, read when present (the app may be mounted, the body parsed). */
type NodeRequest = IncomingMessage & { readonly originalUrl?: string; readonly body?: unknown };

/**
 * A Node request as a web-standard Request: the full path (Express's originalUrl), headers, and
 * the body from `stream` (default: the request itself, unless a body parser read it already).
 */
function toRequest(req: NodeRequest, stream?: Readable): Request {
  const host = req.headers.host ?? 'localhost';
  const url = new URL(req.originalUrl ?? req.url ?? '/', `http://${/^[\w.:[\]-]+$/.test(host) ? host : 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return new Request(url, { method, headers });
  const body = stream === undefined ? bodyOf(req, headers) : (Readable.toWeb(stream) as ReadableStream<Uint8Array>);
  return new Request(url, { method, headers, body, duplex: 'half' } as RequestInit);
}

/** The body still to be read, or the one a body parser already read (Express's express.json()). */
function bodyOf(req: NodeRequest, headers: Headers): RequestInit['body'] {
  if (!req.readableEnded && req.body === undefined) return Readable.toWeb(req) as ReadableStream<Uint8Array>;
  const parsed = req.body;
  if (parsed === undefined || parsed === null) return null;
  headers.delete('content-length'); // what was read is sent again, perhaps re-encoded
  if (typeof parsed === 'string' || parsed instanceof Uint8Array) return parsed as RequestInit['body'];
  // A form express.urlencoded() parsed goes on as the form it was (the dashboard's actions).
  if ((headers.get('content-type') ?? '').startsWith('application/x-www-form-urlencoded') && typeof parsed === 'object') {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) for (const one of [v].flat()) form.append(k, String(one));
    return form.toString();
  }
  headers.set('content-type', 'application/json');
  return JSON.stringify(parsed);
}

/**
 * Write a web-standard Response to a Node response. A request whose body was not read whole (refused
 * for its size) closes the connection after the answer: the rest of it must not be read as the next request.
 */
async function sendResponse(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  for (const [name, value] of response.headers) res.setHeader(name, value);
  if (!req.complete) res.setHeader('connection', 'close');
  const body = response.body === null ? undefined : Buffer.from(await response.arrayBuffer());
  res.end(body);
}

/** The request's full path, without the query. */
export function pathOf(req: IncomingMessage): string {
  return ((req as NodeRequest).originalUrl ?? req.url ?? '/').split('?')[0]!;
}

/** Methods a web-standard Request cannot carry (undici refuses them); any other goes to the API's fetch. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * The API's answer to a Node request (its body from `stream`, see toRequest), for every adapter on
 * Node's http: a method a Request cannot carry is refused here, with the same 405 and `Allow`.
 */
export async function answer(api: Mountable, req: IncomingMessage, stream?: Readable): Promise<Response> {
  if (FORBIDDEN_METHODS.has(req.method ?? '')) return api.refuse(pathOf(req), req.method ?? '');
  let request: Request;
  try {
    request = toRequest(req, stream);
  } catch (error) {
    return problem(400, 'request-invalid', `the request could not be read: ${(error as Error).message}`);
  }
  return api.fetch(request);
}

/**
 * The API as a Node request listener and Express middleware:
 * `http.createServer(nodeHandler(api))`, or `app.use(nodeHandler(api))` in Express (4 or 5; with
 * or without express.json() before it). Requests outside the API go to `next` when there is one.
 */
export function nodeHandler(api: Mountable) {
  return (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void => {
    if (next !== undefined && !api.handles(pathOf(req))) {
      next();
      return;
    }
    void answer(api, req)
      .then((response) => sendResponse(response, req, res))
      .catch((error: unknown) => {
        if (next !== undefined) next(error);
        else if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
  };
}
