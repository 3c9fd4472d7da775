/**
 * sqs-jobs/http: the HTTP API in front of a producer (enqueue with 202 Accepted, job status,
 * an OpenAPI document), on the web-standard Request -> Response signature, with adapters for
 * Node's http, Express, Fastify and Hono; and the web dashboard, mounted the same way.
 *
 * @module sqs-jobs/http
 */
export { createJobsApi } from './api.js';
export type { ApiOptions } from './options.js';
export { nodeHandler } from './node.js';
export { fastifyPlugin } from './fastify.js';
export { honoHandler } from './hono.js';
export { createDashboard } from '../dashboard/dashboard.js';
export type { DashboardOptions, Authorize } from '../dashboard/options.js';
