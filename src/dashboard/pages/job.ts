import type { JobStatus } from '../../ports/status-store.js';
import type { CancelResult } from '../../status/cancel.js';
import { type Html, html, query } from '../html.js';
import { csrfField, type Page, type PageContext, num } from '../layout.js';

const ACTIVE = new Set(['scheduled', 'waiting', 'running', 'retrying']);

/** A job state as a coloured badge (`data-state`): completed ok, failed and cancelled bad, the rest under way. */
export function stateBadge(state: string): Html {
  const tone = state === 'completed' ? 'ok' : state === 'failed' || state === 'cancelled' ? 'bad' : 'warn';
  return html`<span class="badge ${tone}" data-state="${state}">${state}</span>`;
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? String(value);
}

function details(s: JobStatus, ctx: PageContext, cancellable: boolean): Html {
  const p = s.progress;
  const share = p?.total === undefined || p.total === 0 ? undefined : Math.min(1, p.done / p.total);
  const f = s.fanOut;
  const rows: [string, Html | string | undefined][] = [
    ['job', html`<code>${s.jobName}</code>`],
    ['attempt', String(s.attempt)],
    ['enqueued', s.enqueuedAt],
    ['started', s.startedAt],
    ['finished', s.finishedAt],
    ['next attempt', s.nextAttemptAt],
    ['worker', s.worker],
    ['reason', s.reason],
    [
      'parent',
      s.parentId === undefined ? undefined : html`<a href="${ctx.base}/job${query({ id: s.parentId })}"><code>${s.parentId}</code></a>`,
    ],
    ['updated', s.updatedAt],
  ];
  return html`<h1><code>${s.jobId}</code> ${stateBadge(s.state)}</h1>
<table data-table="job"><tbody>${rows.filter(([, v]) => v !== undefined).map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</tbody></table>
${
  p === undefined
    ? ''
    : html`<h2>Progress</h2><p data-progress="${p.done}">${num(p.done)}${p.total === undefined ? '' : html` of ${num(p.total)}`} items</p>
${share === undefined ? '' : html`<progress max="100" value="${Math.round(share * 100)}">${Math.round(share * 100)}%</progress>`}`
}
${
  f === undefined
    ? ''
    : html`<h2>Children</h2><table data-table="children"><thead><tr><th class="n">total</th><th class="n">sent</th><th class="n">succeeded</th><th class="n">failed</th></tr></thead>
<tbody><tr><td class="n">${num(f.total)}</td><td class="n">${num(f.sent)}</td><td class="n">${num(f.succeeded)}</td><td class="n">${num(f.failed)}</td></tr></tbody></table>`
}
${s.error === undefined ? '' : html`<h2>Error</h2><pre data-error>${s.error}</pre>`}
${s.result === undefined ? '' : html`<h2>Result</h2><pre>${json(s.result)}</pre>`}
${s.data === undefined ? '' : html`<h2>Data</h2><pre>${json(s.data)}</pre>`}
${
  cancellable && !ctx.readOnly && ACTIVE.has(s.state)
    ? html`<form method="post" action="${ctx.base}/job/cancel">${csrfField(ctx)}<input type="hidden" name="id" value="${s.jobId}">
<div class="actions"><button type="submit" class="danger" data-action="cancel">Cancel this job</button></div></form>`
    : ''
}`;
}

export interface JobView {
  readonly id: string | undefined;
  /** The job's record; undefined: not found (or no id asked). */
  readonly status: JobStatus | undefined;
  /** Why nothing is shown: no store, a bad id, the store not answering. */
  readonly problem: Html | undefined;
  readonly cancellable: boolean;
  readonly cancelled: CancelResult | undefined;
}

/** Look a tracked job up by id: state, attempt, live progress, fan-out children; cancel it. */
export function jobPage(v: JobView, ctx: PageContext): Page {
  const outcome =
    v.cancelled === undefined
      ? ''
      : html`<p class="notice" role="status" data-cancel="${v.cancelled.outcome}">${
          v.cancelled.outcome === 'cancelled'
            ? 'Cancelled: a waiting job will not run; a running one is told through its signal at its next heartbeat.'
            : v.cancelled.outcome === 'ended'
              ? 'It had ended already: nothing was changed.'
              : 'The job store has no record of it.'
        }</p>`;
  return {
    title: v.id === undefined ? 'Job lookup' : `Job ${v.id}`,
    live: v.status !== undefined && ACTIVE.has(v.status.state),
    main: html`<form class="filters" method="get" action="${ctx.base}/job"><label>job id<input name="id" value="${v.id ?? ''}" size="40"></label><button type="submit">Look up</button></form>
${outcome}${v.problem ?? ''}
${v.status === undefined ? (v.id === undefined || v.problem !== undefined ? '' : html`<p class="notice" data-not-found>No job <code>${v.id}</code> is known: never tracked, or its record expired.</p>`) : details(v.status, ctx, v.cancellable)}`,
  };
}
