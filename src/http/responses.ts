import { type FieldIssue, PayloadTooLargeError, QueueFullError, SqsJobsError, ValidationError } from '../core/errors.js';
import { JobPausedError } from '../core/pause.js';

/** JSON bodies of the HTTP API: what it answers, and problems in RFC 9457 form. */

/** A problem answer (RFC 9457 `application/problem+json`); `errors` names each field and its rule. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly FieldIssue[];
}

/**
 * Problem types are tag URIs (RFC 4151: names, not addresses): this plus the problem's slug, e.g.
 * `tag:sqs-jobs,2026:args-invalid`. docs/guide/http-api.md lists them.
 */
const PROBLEM_BASE = 'tag:sqs-jobs,2026:';

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

/** A problem answer: `slug` names the problem type, `detail` says what was wrong and what to do. */
export function problem(
  status: number,
  slug: string,
  detail: string,
  extra: { errors?: readonly FieldIssue[]; headers?: Record<string, string> } = {},
): Response {
  const body: Problem = {
    type: PROBLEM_BASE + slug,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    ...(extra.errors === undefined ? {} : { errors: extra.errors }),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json; charset=utf-8', 'cache-control': 'no-store', ...extra.headers },
  });
}

/** What an enqueue that failed answers: the caller's mistake (4xx, with the field), or try again later (503). */
export function enqueueProblem(error: unknown, retryAfterSeconds: number): Response {
  if (error instanceof ValidationError) {
    const slug = error.code === 'ARGS_INVALID' ? 'args-invalid' : 'options-invalid';
    return problem(422, slug, error.message, { errors: error.issues });
  }
  if (error instanceof PayloadTooLargeError) return problem(413, 'payload-too-large', error.message);
  if (error instanceof QueueFullError) {
    return problem(429, 'queue-full', error.message, { headers: { 'retry-after': String(Math.ceil(error.retryAfterMs / 1000)) } });
  }
  // 503, not 409: the job is fine and the same request will be taken after the resume (clients retry a 503 on Retry-After).
  if (error instanceof JobPausedError) {
    return problem(503, 'paused', error.message, { headers: { 'retry-after': String(Math.ceil(error.retryAfterMs / 1000)) } });
  }
  if (error instanceof SqsJobsError && error.code === 'ENQUEUE_FAILED') {
    return problem(503, 'enqueue-failed', error.message, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
  throw error;
}
