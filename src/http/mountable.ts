/**
 * What the adapters (nodeHandler, fastifyPlugin, honoHandler) mount: a web-standard handler that
 * says which paths are its own. The HTTP API (JobsApi) and the dashboard are both one.
 */
export interface Mountable {
  /** Where it is mounted ('' at the root). */
  readonly basePath: string;
  /** Fastify route patterns that reach it. */
  readonly routes: readonly string[];
  /** Whether a request for this path is its to answer (adapters pass the others on). */
  handles(pathname: string): boolean;
  /** The methods served at this path (none where nothing is): what a 405's `Allow` lists. */
  allows(pathname: string): readonly string[];
  /**
   * The answer to a method not served at this path (405 with `Allow`, or 404): for methods a
   * web-standard Request cannot carry (TRACE, CONNECT), and requests a framework refuses before
   * they can be handed over.
   */
  refuse(pathname: string, method: string): Response;
  /** Answer one request; never throws. */
  fetch(request: Request): Promise<Response>;
}
