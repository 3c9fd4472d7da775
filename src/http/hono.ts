import type { Mountable } from './mountable.js';

/**
 * The API as a Hono handler: `app.all('/api/*', honoHandler(api))` with `basePath: '/api'`. Hono
 * speaks the web-standard Request already; this passes the original request (full path) through.
 */
export function honoHandler(api: Mountable) {
  return (c: { readonly req: { readonly raw: Request } }): Promise<Response> => api.fetch(c.req.raw);
}
