import { z } from 'zod';
import { JOB_ID_PATTERN } from '../core/envelope.js';
import type { AnyDefinition } from '../core/job.js';

type Schema = Record<string, unknown>;

/** A job's args as JSON Schema (draft 2020-12, what OpenAPI 3.1 speaks): what a client may send. */
function argsJsonSchema(job: AnyDefinition): Schema {
  const { $schema: _, ...schema } = z.toJSONSchema(job.args as z.ZodType, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as Schema;
  return schema;
}

const problemRef = { $ref: '#/components/schemas/Problem' };
const problemContent = { 'application/problem+json': { schema: problemRef } };
const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
};

function problemResponse(description: string, headers?: Schema): Schema {
  return { description, content: problemContent, ...(headers === undefined ? {} : { headers }) };
}

/** Where the status of one job is read, as OpenAPI writes the path. */
function statusPath(basePath: string): string {
  return `${basePath}/jobs/{jobId}`;
}

/**
 * The OpenAPI 3.1 document of an API offering `jobs`: one enqueue operation per job (its body is
 * the job's args schema), the status read when a job store is kept, and this document itself.
 */
export function openApiDocument(
  jobs: ReadonlyMap<string, AnyDefinition>,
  o: { readonly basePath: string; readonly statusRoute: boolean; readonly cancelRoute: boolean; readonly admission?: boolean },
): Schema {
  const paths: Schema = {};
  const idempotencyKey = {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'Becomes the job id: a POST retried with the same key enqueues the job once' +
      (o.statusRoute
        ? ' (the retry answers 200 with the same job id). It cannot be the name of a job offered here.'
        : ' (the workers run it once).'),
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      pattern: JOB_ID_PATTERN.source,
      // A job's status is read at {jobId}, and an offered job's own path serves only POST.
      ...(o.statusRoute ? { not: { enum: [...jobs.keys()].sort() } } : {}),
    },
  };
  const accepted = {
    description: 'Enqueued',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Accepted' } } },
    ...(o.statusRoute ? { headers: { Location: { description: 'Where the job status is read', schema: { type: 'string' } } } } : {}),
  };
  for (const [name, job] of [...jobs].sort(([a], [b]) => a.localeCompare(b))) {
    paths[`${o.basePath}/jobs/${encodeURIComponent(name)}`] = {
      post: {
        operationId: `enqueue_${name.replace(/[^A-Za-z0-9_]/g, '_')}`,
        summary: `Enqueue a "${name}" job`,
        tags: ['jobs'],
        parameters: [idempotencyKey],
        requestBody: {
          description: `The job's args (an empty body reads as {}).`,
          // Optional only when {} is valid args (an empty body reads as {}).
          required: !(job.args as z.ZodType).safeParse({}).success,
          content: { 'application/json': { schema: argsJsonSchema(job) } },
        },
        responses: {
          '202': accepted,
          ...(o.statusRoute ? { '200': { ...accepted, description: 'Already enqueued with this Idempotency-Key' } } : {}),
          '400': problemResponse('The body is not valid JSON or UTF-8'),
          ...(o.statusRoute ? { '409': problemResponse('The Idempotency-Key was used for a job of another type') } : {}),
          '413': problemResponse('The body or the message would be too large'),
          '415': problemResponse('The body is not JSON'),
          '422': problemResponse('The args (or the Idempotency-Key) break a rule: `errors` names each field and rule'),
          ...(o.admission
            ? {
                '429': problemResponse(
                  'The queue is at its high-water mark (drain rate × SLA): come back after Retry-After, when a turn is kept for this same request',
                  retryAfter,
                ),
              }
            : {}),
          '503': problemResponse(
            "SQS (or the job store) did not answer, or the job's queue, job type or tenant is paused (the producer's whilePaused: 'refuse'); try again after Retry-After",
            retryAfter,
          ),
        },
      },
    };
  }
  if (o.statusRoute) {
    const jobIdParameter = { name: 'jobId', in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 128 } };
    const statusContent = { 'application/json': { schema: { $ref: '#/components/schemas/JobStatus' } } };
    const cancel = {
      operationId: 'cancelJob',
      summary: 'Cancel a job',
      description:
        'A waiting job is deleted without running when its message arrives; a running one is signalled ' +
        '(ctx.signal, reason CANCELLED) at its next heartbeat; a fan-out parent cancels its children not yet run.',
      tags: ['jobs'],
      parameters: [jobIdParameter],
      responses: {
        '202': { description: 'Cancelled (or cancelled already): the job status after the cancel', content: statusContent },
        '404': problemResponse('No such job (never tracked here, or its record expired)'),
        '409': problemResponse('The job has ended already (completed or failed)'),
        '503': problemResponse('The job store or memcached did not answer; nothing was cancelled, try again later', retryAfter),
      },
    };
    paths[statusPath(o.basePath)] = {
      ...(o.cancelRoute ? { delete: cancel } : {}),
      get: {
        operationId: 'getJobStatus',
        summary: "A job's status",
        tags: ['jobs'],
        parameters: [jobIdParameter],
        responses: {
          '200': { description: 'The job is known', content: statusContent },
          '404': problemResponse('No such job (never tracked here, or its record expired)'),
          '503': problemResponse('The job store did not answer; try again later', retryAfter),
        },
      },
    };
  }
  paths[`${o.basePath}/openapi.json`] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: ['meta'],
      responses: { '200': { description: 'The OpenAPI document', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'sqs-jobs HTTP API',
      version: '1',
      description: 'Enqueue jobs and read their status. Authentication is up to the server this API is mounted in.',
    },
    paths,
    components: { schemas: componentSchemas() },
  };
}

function componentSchemas(): Schema {
  const text = { type: 'string' };
  const count = { type: 'integer', minimum: 0 };
  const jobId = { type: 'string', minLength: 1, maxLength: 128, pattern: JOB_ID_PATTERN.source };
  return {
    Accepted: {
      type: 'object',
      required: ['jobId'],
      properties: {
        jobId,
        statusUrl: { type: 'string', description: 'Where the job status is read (with a job store)' },
        key: {
          enum: ['sent', 'replaced', 'skipped', 'throttled', 'debounced'],
          description:
            'With a key set by the host (enqueueOptions): what it did; skipped and throttled sent nothing, and jobId is the job holding the key',
        },
      },
    },
    JobStatus: {
      type: 'object',
      required: ['jobId', 'job', 'status', 'attempt', 'updatedAt'],
      properties: {
        jobId,
        job: text,
        status: { enum: ['scheduled', 'waiting', 'running', 'retrying', 'completed', 'failed', 'cancelled', 'waiting-children'] },
        attempt: count,
        itemCount: count,
        itemProgress: count,
        enqueuedAt: { type: 'string', format: 'date-time' },
        startedAt: { type: 'string', format: 'date-time' },
        finishedAt: { type: 'string', format: 'date-time' },
        nextAttemptAt: { type: 'string', format: 'date-time' },
        result: { description: 'What the handler returned, when its JSON was small' },
        error: text,
        reason: { type: 'string', description: 'Why a failed job was dead-lettered, or how it was cancelled' },
        data: { description: 'Small JSON the handler set with ctx.progress' },
        parentId: text,
        children: {
          type: 'object',
          required: ['total', 'sent', 'succeeded', 'failed'],
          properties: { total: count, sent: count, succeeded: count, failed: count },
        },
        updatedAt: { type: 'string', format: 'date-time' },
      },
    },
    Problem: {
      type: 'object',
      required: ['type', 'title', 'status', 'detail'],
      properties: {
        type: text,
        title: text,
        status: { type: 'integer' },
        detail: text,
        errors: {
          type: 'array',
          items: { type: 'object', required: ['field', 'rule'], properties: { field: text, rule: text } },
        },
      },
    },
  };
}
