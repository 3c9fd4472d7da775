import type { ScheduleView } from '../../ops/schedule-view.js';
import type { JobStatus } from '../../ports/status-store.js';
import { ON_TIME_S } from '../../schedules/catch-up.js';
import { type Html, html, query } from '../html.js';
import { csrfField, type Page, type PageContext, ms, num } from '../layout.js';

/** What an action on a schedule did, said above it. */
export type ScheduleNotice = { readonly kind: 'paused' | 'resumed' } | { readonly kind: 'triggered'; readonly jobId: string };

/** An occurrence due by now, and what its job's record says (undefined: no record). */
export interface RecentOccurrence {
  readonly at: string;
  readonly jobId: string;
  readonly status: JobStatus | undefined;
}

/** A time in the schedule's zone (UTC for one it cannot read), then in UTC. */
function when(iso: string, tz: string): Html {
  const at = new Date(iso);
  let zone = tz;
  let local: string;
  try {
    local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'medium' }).format(at);
  } catch {
    zone = 'UTC';
    local = new Intl.DateTimeFormat('en-GB', { timeZone: zone, dateStyle: 'medium', timeStyle: 'medium' }).format(at);
  }
  return html`<time datetime="${iso}">${local} <span class="muted">${zone}</span></time><br><span class="muted">${iso.replace('.000Z', 'Z')} UTC</span>`;
}

const rule = (v: ScheduleView) => html`<code>${v.cron ?? `every ${v.every}`}</code>`;

function actions(v: ScheduleView, ctx: PageContext): Html {
  if (ctx.readOnly || v.problem !== undefined) return html``;
  const form = (action: string, label: string, cls = '') =>
    html`<form method="post" action="${ctx.base}/schedules/${action}" class="inline">${csrfField(ctx)}<input type="hidden" name="id" value="${v.id}"><button type="submit" class="${cls}" data-action="${action}">${label}</button></form>`;
  return html`${v.paused ? form('resume', 'Resume') : form('pause', 'Pause', 'danger')} ${form('trigger', 'Run now')}`;
}

function state(v: ScheduleView): Html {
  if (v.problem !== undefined) return html`<span class="badge bad" title="${v.problem}">unreadable</span>`;
  return v.paused
    ? html`<span class="badge warn" data-state="paused">paused</span>`
    : html`<span class="badge ok" data-state="active">active</span>`;
}

/** Every schedule, a page of them: its rule, next occurrence, last one fired, skipped count; pause, resume, run now. */
export function schedulesPage(
  v: { readonly schedules: readonly ScheduleView[]; readonly cursor: string | undefined; readonly problem: Html | undefined },
  ctx: PageContext,
): Page {
  const rows = v.schedules.map(
    (
      s,
    ) => html`<tr data-schedule="${s.id}"><td><a href="${ctx.base}/schedules${query({ id: s.id })}"><code>${s.id}</code></a><br><span class="muted">${s.owner}</span></td>
<td><code>${s.job}</code></td><td>${rule(s)}</td><td>${s.next === undefined ? html`<span class="muted">none left</span>` : when(s.next, s.tz)}</td>
<td>${s.lastFired === undefined ? html`<span class="muted">never</span>` : html`<a href="${ctx.base}/job${query({ id: s.lastJobId })}">${when(s.lastFired, s.tz)}</a>`}</td>
<td class="n">${num(s.skipped)}</td><td>${state(s)}</td><td>${actions(s, ctx)}</td></tr>`,
  );
  return {
    title: 'Schedules',
    live: true,
    main: html`<h1>Schedules</h1>${v.problem ?? ''}
${
  rows.length === 0
    ? v.problem === undefined
      ? html`<p class="notice">No schedule is kept in this job store (<code>sqs-jobs schedules sync</code>, or <code>createSchedules().upsert()</code>).</p>`
      : ''
    : html`<table data-table="schedules"><thead><tr><th>schedule</th><th>job</th><th>rule</th><th>next</th><th>last fired</th><th class="n">skipped</th><th></th><th></th></tr></thead>
<tbody>${rows}</tbody></table>`
}
${v.cursor === undefined ? '' : html`<p><a href="${ctx.base}/schedules${query({ cursor: v.cursor })}" data-next-page>Next page</a></p>`}`,
  };
}

/** How an occurrence due by now ended: its job's state and how late it was sent, or why it has no job. */
function outcome(o: RecentOccurrence, v: ScheduleView): Html {
  const s = o.status;
  if (s === undefined) {
    const fired = v.lastFired !== undefined && o.at <= v.lastFired;
    return fired
      ? html`<span class="badge warn" data-outcome="skipped">skipped</span> <span class="muted">(or from before the schedule, or its record expired)</span>`
      : html`<span class="muted" data-outcome="not-yet">not fired yet${v.paused ? ' (paused)' : ''}</span>`;
  }
  const tone = s.state === 'completed' ? 'ok' : s.state === 'failed' || s.state === 'cancelled' ? 'bad' : 'warn';
  const lateMs = s.enqueuedAt === undefined ? undefined : Date.parse(s.enqueuedAt) - Date.parse(o.at);
  const caughtUp = lateMs !== undefined && lateMs > ON_TIME_S * 1000;
  return html`<span class="badge ${tone}" data-outcome="${s.state}">${s.state}</span> <span class="muted">sent ${ms(lateMs)} after its time</span>${caughtUp ? html` <span class="badge warn" data-caught-up>caught up</span>` : ''}`;
}

/** One schedule: its rules, next occurrences, the last ones with their jobs and how they ended; pause, resume, run now. */
export function schedulePage(
  v: { readonly view: ScheduleView; readonly recent: readonly RecentOccurrence[]; readonly notice: ScheduleNotice | undefined },
  ctx: PageContext,
): Page {
  const s = v.view;
  const n = v.notice;
  const said =
    n === undefined
      ? ''
      : html`<p class="notice" role="status" data-notice="${n.kind}">${
          n.kind === 'triggered'
            ? html`Sent now as the job <a href="${ctx.base}/job${query({ id: n.jobId })}"><code>${n.jobId}</code></a>.`
            : n.kind === 'paused'
              ? 'Paused: no occurrence fires until it is resumed (jobs already sent run).'
              : 'Resumed: it fires from its next occurrence on (the ones missed while paused do not run).'
        }</p>`;
  const catchUp = typeof s.catchUp === 'string' ? s.catchUp : `within ${s.catchUp.withinSeconds} s, at most ${s.catchUp.max}`;
  const rows: [string, Html | string | undefined][] = [
    ['job', html`<code>${s.job}</code>`],
    ['args', html`<code>${JSON.stringify(s.args)}</code>`],
    ['rule', html`${rule(s)} in <code>${s.tz}</code>`],
    ['overlap', s.overlap],
    ['catch-up', catchUp],
    ['start', s.start],
    ['end', s.end],
    ['queue', html`<code>${s.queueUrl}</code>`],
    ['owner', s.owner],
    ['skipped', num(s.skipped)],
    ['problem', s.problem],
  ];
  return {
    title: `Schedule ${s.id}`,
    live: true,
    main: html`<h1><code>${s.id}</code> ${state(s)}</h1>${said}
<table data-table="schedule"><tbody>${rows.filter(([, x]) => x !== undefined).map(([k, x]) => html`<tr><th>${k}</th><td>${x}</td></tr>`)}</tbody></table>
<div class="actions">${actions(s, ctx)}</div>
<h2>Next</h2>
${s.upcoming.length === 0 ? html`<p class="muted">No occurrence is left.</p>` : html`<ol data-upcoming>${s.upcoming.map((at) => html`<li>${when(at, s.tz)}</li>`)}</ol>`}
<h2>Last occurrences</h2>
${
  v.recent.length === 0
    ? html`<p class="muted">None is due yet.</p>`
    : html`<table data-table="occurrences"><thead><tr><th>occurrence</th><th>job</th><th>how it ended</th></tr></thead><tbody>${v.recent.map(
        (o) =>
          html`<tr data-occurrence="${o.at}"><td>${when(o.at, s.tz)}</td><td>${o.status === undefined ? html`<code class="muted">${o.jobId}</code>` : html`<a href="${ctx.base}/job${query({ id: o.jobId })}"><code>${o.jobId}</code></a>`}</td><td>${outcome(o, s)}</td></tr>`,
      )}</tbody></table>`
}
<p class="muted"><a href="${ctx.base}/schedules">All schedules</a></p>`,
  };
}
