/**
 * sqs-jobs/http: the HTTP API in front of a producer (enqueue with 202 Accepted, job status,
 * an OpenAPI document), on the web-standard Request -> Response signature, with adapters for
 * Node's http, Express, Fastify and Hono.
 */
export { JobsApi, createJobsApi } from './api.js';
export type { ApiOptions } from './options.js';
export type { Problem } from './responses.js';
export type { StatusBody } from './status-view.js';
export { nodeHandler } from './node.js';
export { fastifyPlugin } from './fastify.js';
export { honoHandler } from './hono.js';
