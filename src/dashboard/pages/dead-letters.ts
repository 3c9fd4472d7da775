import type { DeadLetterMessage, ScanResult } from '../../ops/dlq-scan.js';
import { type DeadLetterFilter, describeFilter, FILTER_FIELDS, isFiltered } from '../../ops/dlq-filter.js';
import type { SweepResult } from '../../ops/sweep.js';
import { type Html, html, query } from '../html.js';
import { csrfField, type Page, type PageContext, num } from '../layout.js';

/** A DLQ the dashboard can show: its key (the `dlq` URL parameter: its name, or its URL where names repeat), name and URL, and the queue it serves when it serves one. */
export interface DlqRef {
  readonly key: string;
  readonly name: string;
  readonly url: string;
  /** Where a message that does not name its source goes back to: undefined when the DLQ serves several queues. */
  readonly sourceQueueUrl: string | undefined;
}

/** The URL parameter of each filter field (seconds fields without their unit). */
export const FILTER_PARAMS: Readonly<Record<(typeof FILTER_FIELDS)[number], string>> = {
  job: 'job',
  id: 'id',
  reason: 'reason',
  tenant: 'tenant',
  error: 'error',
  olderThanSeconds: 'olderThan',
  newerThanSeconds: 'newerThan',
};

/** The filter as URL parameters (and hidden form fields), the archived page's too. */
export function filterQuery(f: DeadLetterFilter): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of FILTER_FIELDS) out[FILTER_PARAMS[k]] = f[k] === undefined ? undefined : String(f[k]);
  return out;
}

/** The filter and its DLQ as URL parameters (and hidden form fields). */
function filterParams(dlq: DlqRef, f: DeadLetterFilter): Record<string, string | undefined> {
  return { dlq: dlq.key, ...filterQuery(f) };
}

/** The filter's inputs in a filters form, as the URL has them. */
export function filterFields(f: DeadLetterFilter): Html {
  const field = (label: string, name: string, value: string | number | undefined, placeholder = '') =>
    html`<label>${label}<input name="${name}" value="${value ?? ''}" placeholder="${placeholder}"></label>`;
  return html`${field('job', 'job', f.job)}${field('job id', 'id', f.id)}${field('reason', 'reason', f.reason, 'handler-failed')}${field('tenant', 'tenant', f.tenant)}
${field('error contains', 'error', f.error)}${field('older than (s)', 'olderThan', f.olderThanSeconds)}${field('newer than (s)', 'newerThan', f.newerThanSeconds)}`;
}

function hidden(fields: Record<string, string | undefined>): Html[] {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
}

/** A message body for reading: JSON pretty-printed, anything else as it is. */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** A dead letter's row: when, job, id, tenant, reason, attempt, then `extra` cells, then its message to open. */
export function deadLetterRow(d: DeadLetterMessage, extra: Html | string = ''): Html {
  const l = d.letter;
  const attributes = Object.entries(d.attributes).sort(([a], [b]) => a.localeCompare(b));
  return html`<tr data-message="${l.messageId}">
<td>${l.deadLetteredAt ?? l.sentAt}</td><td><code>${l.jobName ?? (l.event === undefined ? '?' : `(event ${l.event})`)}</code></td><td><code>${l.jobId ?? '—'}</code></td>
<td>${l.tenant ?? '—'}</td><td><span class="badge bad">${l.reason}</span></td><td class="n">${num(l.receiveCount)}</td>${extra}
<td><details><summary>${(l.error ?? '(no error text)').slice(0, 160)}</summary>
<h2>Body</h2><pre data-body>${pretty(d.body)}</pre>
<h2>Attributes</h2><table><tbody>${attributes.map(([k, v]) => html`<tr><td><code>${k}</code></td><td><code>${v}</code></td></tr>`)}</tbody></table>
<p class="muted">Message id <code>${l.messageId}</code>${l.sourceQueueUrl === undefined ? '' : html`, from <code>${l.sourceQueueUrl}</code>`}</p>
</details></td></tr>`;
}

interface DeadLettersView {
  readonly dlqs: readonly DlqRef[];
  readonly dlq: DlqRef;
  readonly filter: DeadLetterFilter;
  /** Why the filter in the URL was refused (field and rule), when it was. */
  readonly filterError: string | undefined;
  readonly scan: ScanResult | undefined;
  /** What SQS counts in the DLQ now. */
  readonly depth: { readonly visible: number; readonly inFlight: number } | undefined;
  readonly problem: Html | undefined;
  readonly limit: number;
}

/** Browse a DLQ with filters; each row opens its message; replay or purge the filtered set (dry run first). */
export function deadLettersPage(v: DeadLettersView, ctx: PageContext): Page {
  const f = v.filter;
  const matches = v.scan?.matches ?? [];
  const summary =
    v.scan === undefined
      ? ''
      : html`<p data-count="${matches.length}">${matches.length} shown${isFiltered(f) ? html` matching <code>${describeFilter(f)}</code>` : ''}
 of ${v.scan.scanned} looked at${v.scan.complete ? '' : matches.length >= v.limit ? html` (stopped at ${v.limit} shown: narrow the filter)` : html` (stopped at ${v.scan.scanned} looked at: narrow the filter)`}${
   v.depth === undefined ? '' : html`; SQS counts ${v.depth.visible} visible, ${v.depth.inFlight} in flight (held by a reader or a replay)`
 }.</p>`;
  const actions =
    ctx.readOnly || v.scan === undefined || matches.length === 0
      ? ''
      : html`<div class="actions">${(['replay', 'purge'] as const).map(
          (
            action,
          ) => html`<form method="post" action="${ctx.base}/dead-letters/${action}">${csrfField(ctx)}${hidden(filterParams(v.dlq, f))}
<button type="submit" data-action="${action}" class="${action === 'purge' ? 'danger' : 'primary'}">${action === 'replay' ? 'Replay' : 'Purge'} the filtered set…</button></form>`,
        )}</div>`;
  return {
    title: 'Dead letters',
    live: false,
    main: html`<h1>Dead letters</h1>
<form class="filters" method="get" action="${ctx.base}/dead-letters">
<label>DLQ<select name="dlq">${v.dlqs.map((d) => html`<option value="${d.key}"${d.key === v.dlq.key ? html` selected` : ''}>${d.key}</option>`)}</select></label>
${filterFields(f)}
<button type="submit">Filter</button> <a href="${ctx.base}/dead-letters${query({ dlq: v.dlq.key })}">clear</a></form>
${v.filterError === undefined ? '' : html`<p class="notice bad" role="alert">The filter was not applied: ${v.filterError}</p>`}
${v.problem ?? ''}${summary}${actions}
${
  matches.length === 0
    ? v.scan === undefined
      ? ''
      : html`<p class="notice">No dead letter matches.</p>`
    : html`<table data-table="dead-letters"><thead><tr><th>dead-lettered</th><th>job</th><th>job id</th><th>tenant</th><th>reason</th><th class="n">attempt</th><th>error (open for the message)</th></tr></thead>
<tbody>${matches.map((d) => deadLetterRow(d))}</tbody></table>`
}`,
  };
}

export type SweepKind = 'replay' | 'purge';

/** The dry run's answer: how many match, and a confirmation that names the count. */
export function confirmPage(
  kind: SweepKind,
  dlq: DlqRef,
  f: DeadLetterFilter,
  dry: SweepResult,
  confirmation: string,
  ctx: PageContext,
): Page {
  const verb = kind === 'replay' ? 'Replay' : 'Delete';
  const back = html`<a href="${ctx.base}/dead-letters${query(filterParams(dlq, f))}">back to the list</a>`;
  return {
    title: `${verb} dead letters`,
    live: false,
    main: html`<h1>${verb} dead letters: dry run</h1>
<p class="notice" data-dry-run="${dry.matched}"><strong>${dry.matched}</strong> dead letter${dry.matched === 1 ? '' : 's'} in <code>${dlq.name}</code> match <code>${describeFilter(f)}</code>.
${kind === 'replay' ? 'Each is sent back to the queue it came from once, and runs again from attempt 1.' : 'Each is deleted for good.'}
Confirming acts on these ${dry.matched} only, once: those dead-lettered since are left alone, and any of these gone meanwhile is not replaced by another.</p>
${
  dry.matched === 0
    ? back
    : html`<form method="post" action="${ctx.base}/dead-letters/${kind}">${csrfField(ctx)}
<input type="hidden" name="confirmation" value="${confirmation}">
<div class="actions"><button type="submit" data-confirm="${dry.matched}" class="${kind === 'purge' ? 'danger' : 'primary'}">${verb} these ${dry.matched}</button> ${back}</div></form>`
}`,
  };
}

/** What a confirmed replay or purge did. */
export function sweptPage(kind: SweepKind, dlq: DlqRef, f: DeadLetterFilter, r: SweepResult, ctx: PageContext): Page {
  const done = kind === 'replay' ? 'moved back' : 'deleted';
  const stopped = r.complete
    ? ''
    : html`<p class="notice warn">It stopped before it had looked at the whole DLQ (interrupted): the rest is there still.</p>`;
  const p = r.passedOver;
  return {
    title: 'Done',
    live: false,
    main: html`<h1>${kind === 'replay' ? 'Replayed' : 'Purged'}</h1>
<p class="notice" data-done="${r.done}"><strong>${r.done}</strong> ${done} from <code>${dlq.name}</code> (filter <code>${describeFilter(f)}</code>; ${kind} id <code>${r.sweepId}</code>).</p>
${stopped}${r.skipped.length === 0 ? '' : html`<h2>Not done as asked</h2><ul>${r.skipped.map((s) => html`<li><code>${s.letter.jobName ?? '?'}</code> <code>${s.letter.jobId ?? s.letter.messageId}</code>: ${s.why}</li>`)}</ul>`}
<p class="muted">Passed over: ${p.notChosen} not matched, ${p.arrivedAfterStart} dead-lettered after it began, ${p.movedByThisReplay} moved by it and failed again.</p>
<p><a href="${ctx.base}/dead-letters${query(filterParams(dlq, f))}">back to the list</a></p>`,
  };
}
