import { listJobs, parseJobListQuery } from '../ops/job-list.js';
import type { JobStore } from '../ports/job-store.js';
import type { StatusStore } from '../ports/status-store.js';
import { html } from './html.js';
import { failure, type Page, type PageContext } from './layout.js';
import { jobsPage } from './pages/jobs.js';

/** Text a filter may be, at most: longer is no job name, tenant or time. */
const MAX_FILTER_CHARS = 200;

/** The Jobs page for the URL's filters: one page of the store's jobs list (read-only: no action); `store`: the dashboard's (a JobStore). */
export async function jobsView(
  store: (StatusStore & Pick<JobStore, 'jobs'>) | undefined,
  params: URLSearchParams,
  ctx: PageContext,
): Promise<Page> {
  const get = (name: string) => params.get(name)?.slice(0, MAX_FILTER_CHARS) || undefined;
  const filters = {
    job: get('job'),
    state: get('state'),
    tenant: get('tenant'),
    since: get('since'),
    limit: get('limit'),
    cursor: get('cursor'),
  };
  const view = { filters, page: undefined };
  if (store === undefined)
    return jobsPage(
      { ...view, problem: html`<p class="notice">Jobs are not listed here: no job store (SQS_JOBS_JOB_TABLE or the store option).</p>` },
      ctx,
    );
  const parsed = parseJobListQuery(filters);
  if ('problem' in parsed)
    return jobsPage(
      { ...view, problem: html`<p class="notice bad" data-problem>${parsed.problem.field}: ${parsed.problem.rule}</p>` },
      ctx,
    );
  try {
    const page = await listJobs(store, parsed.query, parsed.cursor);
    return jobsPage({ filters, page, problem: undefined, since: parsed.query.since?.toISOString() }, ctx);
  } catch (error) {
    return jobsPage({ ...view, problem: failure('The job store', error) }, ctx);
  }
}
