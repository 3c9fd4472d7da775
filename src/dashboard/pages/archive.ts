import type { ArchivedLetter } from '../../ops/archive-list.js';
import { type DeadLetterFilter, describeFilter, FILTER_FIELDS, isFiltered } from '../../ops/dlq-filter.js';
import { type Html, html, query } from '../html.js';
import type { Page, PageContext } from '../layout.js';
import { deadLetterRow, FILTER_PARAMS, filterFields, filterQuery } from './dead-letters.js';

/** What the Archived dead letters page shows: one page of the archive, or why there is none. */
export interface ArchiveView {
  /** How the archive is named (`s3://bucket/prefix`); undefined: no archive is configured. */
  readonly url: string | undefined;
  readonly filter: DeadLetterFilter;
  /** Why the filter (or `limit`) in the URL was refused, when it was. */
  readonly filterError: string | undefined;
  /** The key this page starts after (the previous page's `next`). */
  readonly after: string | undefined;
  /** Rows a page, as the URL asked (kept in the links) and as used. */
  readonly limit: { readonly asked: string | undefined; readonly used: number };
  readonly list:
    | {
        readonly letters: readonly ArchivedLetter[];
        readonly next: string | undefined;
        readonly scanned: number;
        readonly unreadable: number;
      }
    | undefined;
  /** S3 (or the store) not answering, or refusing. */
  readonly problem: Html | undefined;
}

/** A value as one shell word: as it is when it needs no quotes, else in single quotes. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The command that replays what the page shows (its filter), from the archive: the dashboard only reads it. */
function replayCommand(url: string, f: DeadLetterFilter): string {
  const flags = FILTER_FIELDS.filter((k) => f[k] !== undefined).map(
    (k) => ` --${FILTER_PARAMS[k].replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${shellWord(String(f[k]))}`,
  );
  return `sqs-jobs dlq replay --from ${shellWord(url)}${flags.join('')} --dry-run`;
}

function cells(a: ArchivedLetter): Html {
  return html`<td><time datetime="${a.archivedAt}">${a.archivedAt}</time></td><td data-replayed="${a.replayed ? 'yes' : 'no'}">${
    a.replayed ? html`<span class="badge ok">yes</span>` : 'no'
  }</td>`;
}

/** Dead letters archived to S3, filtered as in the DLQ and paged by key; read-only (replaying stays the CLI's). */
export function archivePage(v: ArchiveView, ctx: PageContext): Page {
  const title = 'Archived dead letters';
  if (v.url === undefined)
    return {
      title,
      live: false,
      main: html`<h1>${title}</h1>
<p class="notice" data-empty>No archive is configured: start the dashboard with <code>--archive s3://bucket/prefix</code> (the <code>archive</code> option), where <code>sqs-jobs dlq archive --to</code> writes.</p>`,
    };
  const f = v.filter;
  const kept = { ...filterQuery(f), limit: v.limit.asked };
  const list = v.list;
  const letters = list?.letters ?? [];
  const summary =
    list === undefined
      ? ''
      : html`<p data-count="${letters.length}">${letters.length} shown${isFiltered(f) ? html` matching <code>${describeFilter(f)}</code>` : ''} of ${list.scanned} read${
          v.after === undefined ? '' : ' on this page'
        }${list.unreadable === 0 ? '' : html` (${list.unreadable} left out: not a dead letter's record, or too large)`}${list.next === undefined ? '; the end of the archive' : letters.length < v.limit.used ? html`; stopped at ${list.scanned} read: the next page reads on` : ''}.</p>`;
  const paging =
    list === undefined
      ? ''
      : html`<p class="actions">${v.after === undefined ? '' : html`<a href="${ctx.base}/archive${query(kept)}" data-page="first">← first page</a>`}${
          list.next === undefined
            ? html`<span class="muted" data-page="last">the last page</span>`
            : html`<a href="${ctx.base}/archive${query({ ...kept, after: list.next })}" data-page="next">next →</a>`
        }</p>`;
  const table =
    letters.length === 0
      ? list === undefined
        ? ''
        : html`<p class="notice" data-empty>No archived dead letter ${isFiltered(f) ? 'matches' : 'is here'}${v.after === undefined ? '' : ' past this point'}.</p>`
      : html`<table data-table="archived"><thead><tr><th>dead-lettered</th><th>job</th><th>job id</th><th>tenant</th><th>reason</th><th class="n">attempt</th><th>archived</th><th>replayed</th><th>error (open for the message)</th></tr></thead>
<tbody>${letters.map((a) => deadLetterRow(a, cells(a)))}</tbody></table>`;
  return {
    title,
    live: false,
    main: html`<h1>${title}</h1>
<p class="muted">What <code>sqs-jobs dlq archive</code> wrote to <code>${v.url}</code>, in key order (the DLQ message id), ${v.limit.used} a page. This page only reads it: to send them back, run
<code data-command="replay">${replayCommand(v.url, f)}</code> (then again without <code>--dry-run</code>); those marked replayed are left.</p>
<form class="filters" method="get" action="${ctx.base}/archive">
${filterFields(f)}${v.limit.asked === undefined ? '' : html`<input type="hidden" name="limit" value="${v.limit.asked}">`}
<button type="submit">Filter</button> <a href="${ctx.base}/archive">clear</a></form>
${v.filterError === undefined ? '' : html`<p class="notice bad" role="alert">The filter was not applied: ${v.filterError}</p>`}
${v.problem ?? ''}${summary}
${table}
${paging}`,
  };
}
