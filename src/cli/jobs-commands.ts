import { createDynamoJobStore } from '../adapters/dynamodb-store.js';
import { ConfigError, SqsJobsError, toError } from '../core/errors.js';
import { type JobListText, listJobs, parseJobListQuery } from '../ops/job-list.js';
import { type JobListPage, type JobListRow, oneLine } from '../ports/job-list.js';
import type { CliContext } from './commands.js';
import { type StoreFlags, storeFrom } from './job-commands.js';
import { table } from './render.js';

/** How long the store this command makes keeps what it writes: it writes nothing, so any. */
const READ_ONLY_TTL_SECONDS = 86_400;

interface JobsListFlags extends StoreFlags, Omit<JobListText, 'cursor'> {
  readonly cursor?: string;
  readonly json?: boolean;
}

/**
 * `sqs-jobs jobs list [--job N] [--state S] [--tenant T] [--since 1h|ISO] [--limit n] [--cursor c] [--json]`:
 * one page of the tracked jobs in the job store, newest state change first, and the next page's cursor.
 */
export async function jobsList(flags: JobsListFlags, { out, env }: CliContext): Promise<void> {
  const parsed = parseJobListQuery(flags);
  if ('problem' in parsed) {
    const given = flags[parsed.problem.field];
    throw new ConfigError(`--${parsed.problem.field}: ${parsed.problem.rule} (got ${JSON.stringify(given)})`);
  }
  const { table: name, aws } = storeFrom(flags, env);
  const store = createDynamoJobStore(aws, name, READ_ONLY_TTL_SECONDS, env);
  let page: JobListPage;
  try {
    page = await listJobs(store, parsed.query, parsed.cursor);
  } catch (error) {
    if (error instanceof SqsJobsError) throw error;
    const e = toError(error);
    throw new SqsJobsError('STORE_UNREACHABLE', `the job store (table ${name}) did not answer: ${e.name}: ${e.message}`, { cause: error });
  } finally {
    store.close();
  }
  if (flags.json) return out(JSON.stringify(page));
  out(renderJobsPage(page, parsed.query.since?.toISOString()));
}

/** What a row says, in a column: its `said` on one line (no control characters), at most 80 characters. */
function said(row: JobListRow): string {
  const text = oneLine(row.said ?? '');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text || '-';
}

/**
 * A page as a table, and what comes next: the flags of the next page (the cursor, and `since` as
 * the time it resolved to, so a relative one does not move between pages), or that this was the
 * last. A short page says how far back it looked.
 */
export function renderJobsPage(page: JobListPage, since?: string): string {
  const next =
    page.cursor === undefined ? '(last page)' : `next page: --cursor ${page.cursor}${since === undefined ? '' : ` --since ${since}`}`;
  const looked = page.cursor !== undefined && page.lookedBackTo !== undefined ? ` (looked back to ${page.lookedBackTo})` : '';
  if (page.rows.length === 0)
    return `${page.cursor === undefined ? 'no tracked job matches' : `none found in this stretch${looked}`} (only tracked jobs are listed: enqueued with track, or defined with track: true)\n${next}`;
  const rows = page.rows.map((r) => [r.jobId, r.jobName, r.tenant ?? '-', r.state, String(r.attempt), r.at, said(r)]);
  return `${table(['JOB ID', 'JOB', 'TENANT', 'STATE', 'ATTEMPT', 'STATE SINCE', 'ERROR / REASON'], rows)}\n${next}`;
}
