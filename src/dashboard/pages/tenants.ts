import type { QueueCounts } from '../../ports/queue-admin.js';
import { type Html, html, query } from '../html.js';
import { type Page, type PageContext, ms, num } from '../layout.js';
import { sparkline } from '../spark.js';
import { atCap, TENANT_ORDERS, type TenantOrder, type TenantSummary, type TenantsView } from '../tenant-summary.js';

/** Tenants shown at most (the filter finds the others). */
const TENANT_ROWS = 100;

/** A job queue and its spillover queue (when it has one): where the spillover holds a tenant's excess. */
export interface SpillRow {
  readonly queue: string;
  readonly main: QueueCounts | undefined;
  readonly spill: { readonly name: string; readonly counts: QueueCounts | undefined } | undefined;
}

interface TenantsPageInput {
  /** Undefined: no tenant meter (no memcached given), or it could not be read (`problem`). */
  readonly view: TenantsView | undefined;
  readonly problem: Html | undefined;
  readonly spill: readonly SpillRow[];
  readonly windowMinutes: number;
  readonly filter: { readonly tenant: string; readonly sort: TenantOrder };
}

const ORDER_LABELS: Readonly<Record<TenantOrder, string>> = {
  wait: 'longest wait',
  'mean-wait': 'mean wait',
  started: 'jobs started',
  deferred: 'over its cap',
  running: 'running now',
  failed: 'failed and dead-lettered',
};

function spillTable(rows: readonly SpillRow[]): Html {
  const depth = (c: QueueCounts | undefined) =>
    c === undefined
      ? html`<td class="n" colspan="3"><span class="muted">could not be read</span></td>`
      : html`<td class="n">${num(c.visible)}</td><td class="n">${num(c.inFlight)}</td><td class="n">${num(c.delayed)}</td>`;
  return html`<h2>Spillover</h2>
<table data-table="spill"><thead><tr><th>queue</th><th class="n">visible</th><th class="n">in flight</th><th class="n">delayed</th>
<th>spillover queue</th><th class="n">visible</th><th class="n">in flight</th><th class="n">delayed</th></tr></thead>
<tbody>${rows.map(
    (r) => html`<tr data-spill="${r.queue}"><td><code>${r.queue}</code></td>${depth(r.main)}
${r.spill === undefined ? html`<td colspan="4"><span class="muted">none (the producer's spillover option)</span></td>` : html`<td><code>${r.spill.name}</code></td>${depth(r.spill.counts)}`}</tr>`,
  )}</tbody></table>`;
}

function tenantRow(t: TenantSummary, view: TenantsView, ctx: PageContext): Html {
  const capped = atCap(t);
  const spilled = t.queues.some((q) => /-spill$/.test(q));
  const mean = t.started === 0 ? undefined : t.waitMsTotal / t.started;
  const dead = t.deadLettered > 0 ? html` <a href="${ctx.base}/dead-letters${query({ tenant: t.tenant })}">dead letters</a>` : '';
  return html`<tr data-tenant="${t.tenant}"><td><code>${t.tenant}</code>${dead}</td>
<td>${capped ? html`<span class="badge warn" data-at-cap>at its cap</span> ` : ''}${spilled ? html`<span class="badge warn" data-spilled title="some of its jobs went through the spillover queue">spilled</span>` : ''}</td>
<td class="n">${num(t.started)}</td><td>${sparkline(t.startedPerMinute, { from: view.from, to: view.to, label: `${t.tenant} started per minute`, gaps: 'zero' })}</td>
<td class="n">${ms(mean)}</td><td class="n">${ms(t.started === 0 ? undefined : t.waitMsMax)}</td>
<td class="n">${num(t.running)}</td><td class="n">${t.cap === undefined ? '—' : num(t.cap)}</td>
<td class="n">${num(t.deferred)}</td><td class="n">${num(t.failed)}</td><td class="n">${num(t.deadLettered)}</td></tr>`;
}

/** Per tenant: jobs started, waits, caps, jobs over the cap, spillover; the spillover queues' depth. */
export function tenantsPage(v: TenantsPageInput, ctx: PageContext): Page {
  const f = v.filter;
  const needle = f.tenant.toLowerCase();
  const key = TENANT_ORDERS[f.sort];
  const all = v.view?.tenants ?? [];
  const matching = all.filter((t) => needle === '' || t.tenant.toLowerCase().includes(needle));
  const shown = [...matching].sort((a, b) => key(b) - key(a) || a.tenant.localeCompare(b.tenant)).slice(0, TENANT_ROWS);
  const capped = all.filter(atCap).length;
  const deferred = all.reduce((n, t) => n + t.deferred, 0) + (v.view?.others.deferred ?? 0);
  const o = v.view?.others;
  const form = html`<form class="filters" method="get" action="${ctx.base}/tenants">
<label>tenant contains<input name="tenant" value="${f.tenant}"></label>
<label>order by<select name="sort">${Object.entries(ORDER_LABELS).map(
    ([value, label]) => html`<option value="${value}"${value === f.sort ? html` selected` : ''}>${label}</option>`,
  )}</select></label>
<button type="submit">Show</button> <a href="${ctx.base}/tenants">clear</a></form>`;
  let body: Html;
  if (v.view === undefined) {
    body =
      v.problem ??
      html`<p class="notice">Per-tenant figures come from the workers through their memcached: give the dashboard the same memcached (<code>--memcached</code>, <code>SQS_JOBS_MEMCACHED</code> or the <code>memcached</code> option) and key prefix.</p>`;
  } else if (all.length === 0 && (o?.started ?? 0) === 0) {
    body = html`<p class="notice">No job with a tenant has run in the last ${v.windowMinutes} min (or the workers have no memcached: their <code>memcached</code> or <code>tenantMeter</code> option).</p>`;
  } else {
    body = html`<p data-summary>${num(all.length)} tenant${all.length === 1 ? '' : 's'} seen, <strong data-capped="${capped}">${num(capped)} at ${capped === 1 ? 'its' : 'their'} cap now</strong>, ${num(deferred)} job${deferred === 1 ? '' : 's'} over a cap (waited or deferred); ${num(v.view.workers)} worker${v.view.workers === 1 ? '' : 's'} reporting.</p>
${form}
${
  shown.length === 0
    ? html`<p class="notice">No tenant matches.</p>`
    : html`<table data-table="tenants"><thead><tr><th>tenant</th><th></th><th class="n">started</th><th>per minute</th><th class="n">wait mean</th><th class="n">wait max</th>
<th class="n">running</th><th class="n">cap</th><th class="n" title="jobs that found their tenant at its cap: waited in a worker, or re-sent">over cap</th><th class="n">failed</th><th class="n">dead-lettered</th></tr></thead>
<tbody>${shown.map((t) => tenantRow(t, v.view!, ctx))}${
        o !== undefined && o.mostPerReport > 0 && needle === ''
          ? html`<tr data-tenant-others><td colspan="2"><span class="muted">other tenants (up to ${num(o.mostPerReport)} per worker report)</span></td>
<td class="n">${num(o.started)}</td><td></td><td class="n">${ms(o.started === 0 ? undefined : o.waitMsTotal / o.started)}</td><td class="n">${ms(o.started === 0 ? undefined : o.waitMsMax)}</td>
<td class="n">${num(o.running)}</td><td></td><td class="n">${num(o.deferred)}</td><td class="n">${num(o.failed)}</td><td class="n">${num(o.deadLettered)}</td></tr>`
          : ''
      }</tbody></table>`
}${matching.length > shown.length ? html`<p class="muted">The first ${TENANT_ROWS} of ${num(matching.length)} are shown: narrow the filter.</p>` : ''}`;
  }
  return {
    title: 'Tenants',
    live: true,
    main: html`<h1>Tenants, last ${v.windowMinutes} min</h1>
${body}
${spillTable(v.spill)}
<p class="muted">Waits run from SQS's SentTimestamp to the handler's start, as each worker saw them; "running" and "cap" are as the workers last reported (every 15 s). Each worker report names the 20 tenants at their cap or that waited longest, and sums the rest. Spillover depth is read from SQS now.</p>`,
  };
}
