import { ConfigError } from '../core/errors.js';
import { jobNameSchema } from '../core/definition-rules.js';
import { tenantSchema } from '../core/envelope.js';
import { fromListCursor, JOB_STATES, type JobListPage, type JobListQuery, MAX_LIST_LIMIT } from '../ports/job-list.js';
import type { JobStore } from '../ports/job-store.js';
import type { JobState } from '../ports/status-store.js';
import { everySeconds } from '../schedules/every.js';

/** The jobs list's filters as typed (`sqs-jobs jobs list` flags, the Jobs page's URL): text, each optional. */
export interface JobListText {
  readonly job?: string | undefined;
  readonly state?: string | undefined;
  readonly tenant?: string | undefined;
  /** A duration back from now ('90s', '30m', '1h', '2d', '1h30m'), a date (UTC midnight) or a time with its zone (parseSince). */
  readonly since?: string | undefined;
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
}

/** What is wrong with one of them: its name (as in JobListText) and the rule it breaks. */
export interface JobListProblem {
  readonly field: keyof JobListText;
  readonly rule: string;
}

/** An ISO-8601 date, or date and time with `Z` or an offset (what `since` takes besides a duration). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,3})?)?(Z|([+-])(\d{2}):?(\d{2})))?$/i;

const SINCE_RULE =
  "must be a duration back from now ('30m', '1h', '2d', '1h30m'), a date (2026-12-01: UTC midnight) or a date and time with Z or an offset (2026-12-01T09:00:00Z, 2026-12-01T10:00:00+01:00)";

/**
 * `since` as epoch ms, or the rule it breaks: a duration counts back from `nowMs`; a date alone is
 * UTC midnight; a time must say its zone (no local time: the CLI and the dashboard's server may
 * not share the reader's); a date or time that is not one (2026-02-30, 24:00) is refused, not rolled over.
 */
export function parseSince(text: string, nowMs: number): number | { readonly rule: string } {
  const seconds = everySeconds(text);
  if (seconds !== undefined) return nowMs - seconds * 1000;
  const m = ISO_TIME.exec(text);
  if (m === null)
    return { rule: /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) ? `${SINCE_RULE}: add its zone` : SINCE_RULE };
  const [y, mo, d, h = 0, mi = 0, sec = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((v) => (v === undefined ? undefined : Number(v)));
  const [oh, om] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  const day = new Date(Date.UTC(y!, mo! - 1, d!));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo! - 1 || day.getUTCDate() !== d)
    return { rule: `${SINCE_RULE}: ${m[1]}-${m[2]}-${m[3]} is no date` };
  if (h > 23 || mi > 59 || sec > 59 || oh > 23 || om > 59) return { rule: `${SINCE_RULE}: its time is out of range` };
  const offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  return day.getTime() + ((h * 60 + mi) * 60 + sec) * 1000 + Math.round(Number(m[7] ?? 0) * 1000) - offset;
}

/**
 * The filters checked, once, where they come in: the query list() takes and the cursor, or the
 * first problem (field and rule). Empty text is no filter. `nowMs`: what a duration counts back from.
 */
export function parseJobListQuery(
  text: JobListText,
  nowMs: number = Date.now(),
): { readonly query: JobListQuery; readonly cursor: string | undefined } | { readonly problem: JobListProblem } {
  const given = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const [job, state, tenant, since, limit, cursor] = [text.job, text.state, text.tenant, text.since, text.limit, text.cursor].map(given);
  const problem = (field: keyof JobListText, rule: string) => ({ problem: { field, rule } });
  if (job !== undefined && !jobNameSchema.safeParse(job).success)
    return problem('job', 'must be a job name: 1-80 letters, digits, _ . : - starting with a letter or digit');
  if (state !== undefined && !JOB_STATES.includes(state as JobState)) return problem('state', `must be one of ${JOB_STATES.join(', ')}`);
  if (tenant !== undefined && !tenantSchema.safeParse(tenant).success)
    return problem('tenant', 'must be a tenant: 1-128 printable ASCII characters without spaces');
  let sinceMs: number | undefined;
  if (since !== undefined) {
    const ms = parseSince(since, nowMs);
    if (typeof ms !== 'number') return problem('since', ms.rule);
    sinceMs = ms;
  }
  if (limit !== undefined && !/^\d{1,3}$/.test(limit)) return problem('limit', `must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  const size = limit === undefined ? undefined : Number(limit);
  if (size !== undefined && (size < 1 || size > MAX_LIST_LIMIT))
    return problem('limit', `must be a whole number from 1 to ${MAX_LIST_LIMIT}`);
  if (cursor !== undefined) {
    try {
      fromListCursor(cursor);
    } catch {
      return problem('cursor', 'must be a cursor a page of this list gave');
    }
  }
  const query: JobListQuery = {
    ...(job === undefined ? {} : { job }),
    ...(state === undefined ? {} : { state: state as JobState }),
    ...(tenant === undefined ? {} : { tenant }),
    ...(sinceMs === undefined ? {} : { since: new Date(sinceMs) }),
    ...(size === undefined ? {} : { limit: size }),
  };
  return { query, cursor };
}

/** One page of the store's jobs list; CONFIG_INVALID when the store keeps none (a JobStore of your own without `jobs`). */
export function listJobs(store: Pick<JobStore, 'jobs'>, query: JobListQuery, cursor?: string): Promise<JobListPage> {
  if (store.jobs === undefined)
    throw new ConfigError('this job store keeps no jobs list (its `jobs`): use DynamoDB’s (a table) or MemoryJobStore, or add one');
  return store.jobs.list(query, cursor);
}
