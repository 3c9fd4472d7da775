import type { JobListText } from '../../ops/job-list.js';
import { DEFAULT_LIST_LIMIT, JOB_STATES, type JobListPage, type JobListRow } from '../../ports/job-list.js';
import { type Html, html, query } from '../html.js';
import type { Page, PageContext } from '../layout.js';
import { stateBadge } from './job.js';

/** What the Jobs page shows: the filters as typed, and the page they found, or why there is none. */
export interface JobsView {
  readonly filters: JobListText;
  readonly page: JobListPage | undefined;
  /** Why no page: no job store, a filter that does not read, the store not answering. */
  readonly problem: Html | undefined;
  /** `since` as the time it resolved to (ISO-8601), which the older link carries: a relative one would move between pages. */
  readonly since?: string | undefined;
}

function row(r: JobListRow, ctx: PageContext): Html {
  return html`<tr data-job-id="${r.jobId}"><td><a href="${ctx.base}/job${query({ id: r.jobId })}"><code>${r.jobId}</code></a></td>
<td><code>${r.jobName}</code></td><td>${r.tenant === undefined ? html`<span class="muted">—</span>` : html`<code>${r.tenant}</code>`}</td>
<td>${stateBadge(r.state)}</td><td class="n">${r.attempt}</td><td><time datetime="${r.at}">${r.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time></td>
<td>${r.said ?? ''}</td></tr>`;
}

/** Tracked jobs by job, state, tenant and time: a GET form of filters, a page of rows each linked to its job, and the next page. */
export function jobsPage(v: JobsView, ctx: PageContext): Page {
  const f = v.filters;
  const kept = { job: f.job, state: f.state, tenant: f.tenant, since: f.since, limit: f.limit };
  const form = html`<form class="filters" method="get" action="${ctx.base}/jobs">
<label>job<input name="job" value="${f.job ?? ''}" size="20"></label>
<label>state<select name="state"><option value="">any</option>${JOB_STATES.map(
    (s) => html`<option value="${s}"${s === f.state ? html` selected` : ''}>${s}</option>`,
  )}</select></label>
<label>tenant<input name="tenant" value="${f.tenant ?? ''}" size="16"></label>
<label>since<input name="since" value="${f.since ?? ''}" size="22" placeholder="1h, 30m, 2d or an ISO time"></label>
<button type="submit">Filter</button> <a href="${ctx.base}/jobs">clear</a></form>`;
  const p = v.page;
  const paging =
    p === undefined
      ? ''
      : html`<p class="actions">${f.cursor === undefined ? '' : html`<a href="${ctx.base}/jobs${query(kept)}" data-page="newest">← newest</a>`}${
          p.cursor === undefined
            ? html`<span class="muted" data-page="last">the last page</span>`
            : html`<a href="${ctx.base}/jobs${query({ ...kept, since: v.since ?? f.since, cursor: p.cursor })}" data-page="older">older →</a>`
        }</p>`;
  let body: Html | string = v.problem ?? '';
  if (p !== undefined && p.rows.length === 0)
    body = html`<p class="notice" data-empty>${p.cursor === undefined ? 'No tracked job matches.' : `None found back to ${p.lookedBackTo ?? 'here'}: look older.`}</p>`;
  else if (p !== undefined)
    body = html`${p.cursor !== undefined && p.lookedBackTo !== undefined && p.rows.length < Number(f.limit ?? DEFAULT_LIST_LIMIT) ? html`<p class="muted" data-short>A short page: looked back to ${p.lookedBackTo}.</p>` : ''}<table data-table="jobs"><thead><tr><th>job id</th><th>job</th><th>tenant</th><th>state</th><th class="n">attempt</th><th>state since</th><th>error / reason</th></tr></thead>
<tbody>${p.rows.map((r) => row(r, ctx))}</tbody></table>`;
  return {
    title: 'Jobs',
    live: false,
    main: html`<h1>Jobs</h1>
${form}
${body}
${paging}
<p class="muted">Only tracked jobs are listed (enqueued with <code>track</code>, or defined with <code>track: true</code>), newest state change first, as their records last said (a scheduled job whose time came still reads scheduled here). Open one for its progress, children and result.</p>`,
  };
}
