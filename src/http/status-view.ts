import type { JobStatus } from '../ports/status-store.js';

/**
 * A job's status as the HTTP API answers it: `status`, `itemCount` and `itemProgress` (the shape
 * web front ends poll for), plus the attempt, times, result or error, and a fan-out's children.
 * Who ran it (host and pid) is left out: that is for operators (`sqs-jobs job`), not API clients.
 */
interface StatusBody {
  readonly jobId: string;
  readonly job: string;
  readonly status: JobStatus['state'];
  readonly attempt: number;
  readonly itemCount?: number;
  readonly itemProgress?: number;
  readonly enqueuedAt?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly nextAttemptAt?: string;
  readonly result?: unknown;
  readonly error?: string;
  readonly reason?: string;
  readonly data?: unknown;
  readonly parentId?: string;
  readonly children?: { readonly total: number; readonly sent: number; readonly succeeded: number; readonly failed: number };
  readonly updatedAt: string;
}

export function statusBody(s: JobStatus): StatusBody {
  const f = s.fanOut;
  return {
    jobId: s.jobId,
    job: s.jobName,
    status: s.state,
    attempt: s.attempt,
    ...(s.progress?.total === undefined ? {} : { itemCount: s.progress.total }),
    ...(s.progress === undefined ? {} : { itemProgress: s.progress.done }),
    ...optional('enqueuedAt', s.enqueuedAt),
    ...optional('startedAt', s.startedAt),
    ...optional('finishedAt', s.finishedAt),
    ...optional('nextAttemptAt', s.nextAttemptAt),
    ...optional('result', s.result),
    ...optional('error', s.error),
    ...optional('reason', s.reason),
    ...optional('data', s.data),
    ...optional('parentId', s.parentId),
    ...(f === undefined ? {} : { children: { total: f.total, sent: f.sent, succeeded: f.succeeded, failed: f.failed } }),
    updatedAt: s.updatedAt,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}
