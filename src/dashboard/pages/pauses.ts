import type { PauseView } from '../../ops/pauses.js';
import { type Html, html } from '../html.js';
import { csrfField, type Page, type PageContext } from '../layout.js';

/** What an action on a pause did, said above the list. */
export interface PauseNotice {
  readonly kind: 'paused' | 'resumed' | 'not-paused';
}

const since = (d: Date) => html`<time datetime="${d.toISOString()}">${d.toISOString().replace('.000Z', 'Z')}</time>`;

function resumeForm(p: PauseView, ctx: PageContext): Html {
  if (ctx.readOnly) return html``;
  const field = (name: string, value: string | undefined) =>
    value === undefined ? '' : html`<input type="hidden" name="${name}" value="${value}">`;
  return html`<form method="post" action="${ctx.base}/pauses/resume" class="inline">${csrfField(ctx)}${field('queue', p.scope.queue)}${field('job', p.scope.job)}${field('tenant', p.scope.tenant)}<button type="submit" data-action="resume">Resume</button></form>`;
}

/** The form that pauses a queue, a job type, a tenant, or a job type for one tenant (not shown read-only). */
function pauseForm(ctx: PageContext): Html {
  if (ctx.readOnly) return html``;
  return html`<form method="post" action="${ctx.base}/pauses/pause" class="pause-form" data-form="pause">${csrfField(ctx)}
<fieldset><legend>Pause</legend>
<label>queue <input name="queue" placeholder="orders (or its URL)" size="18"></label> or
<label>job <input name="job" placeholder="charge-invoice" size="18"></label>
<label>tenant <input name="tenant" placeholder="acme" size="12"></label>
<label>for <input name="for" placeholder="30m (blank: until resumed)" size="22"></label>
<label>reason <input name="reason" size="30" maxlength="500"></label>
<button type="submit" class="danger" data-action="pause">Pause</button></fieldset></form>
<p class="muted">Running jobs finish. A paused queue is not received from; a paused job type's or tenant's jobs wait in the workers or go back to their queue for a while, never to the DLQ (the pause guide, docs/guide/pause.md, says what waits where and what it costs). On a FIFO queue, pause the queue.</p>`;
}

/** What is paused: what, by whom, since and until when, why; resume each, or pause more. */
export function pausesPage(
  v: { readonly pauses: readonly PauseView[]; readonly notice: PauseNotice | undefined; readonly problem: Html | undefined },
  ctx: PageContext,
): Page {
  const n = v.notice;
  const said =
    n === undefined
      ? ''
      : html`<p class="notice" role="status" data-notice="${n.kind}">${
          n.kind === 'paused'
            ? 'Paused: workers stop starting its jobs within about a second.'
            : n.kind === 'resumed'
              ? 'Resumed: its held jobs start within about a second, those handed back when their delay ends.'
              : 'It was not paused: nothing to resume.'
        }</p>`;
  const rows = v.pauses.map(
    (p) => html`<tr data-pause="${p.key}"><td>${p.what}</td><td>${p.by}</td><td>${since(p.at)}</td>
<td>${p.until === undefined ? html`<span class="muted">until resumed</span>` : since(p.until)}</td><td>${p.reason ?? ''}</td>
<td>${p.inForce ? html`<span class="badge warn" data-state="paused">paused</span>` : html`<span class="badge" data-state="ended">ended</span>`}</td>
<td>${resumeForm(p, ctx)}</td></tr>`,
  );
  return {
    title: 'Pauses',
    // Not refreshed in place: the form's half-typed fields would be lost.
    live: false,
    main: html`<h1>Pauses</h1>${said}${v.problem ?? ''}
${
  rows.length === 0
    ? v.problem === undefined
      ? html`<p class="notice" data-empty>Nothing is paused.</p>`
      : ''
    : html`<table data-table="pauses"><thead><tr><th>paused</th><th>by</th><th>since</th><th>until</th><th>reason</th><th></th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`
}
${pauseForm(ctx)}`,
  };
}
