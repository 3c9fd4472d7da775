import { type Html, html } from './html.js';

/** What every page needs to know of the request and the dashboard's settings. */
export interface PageContext {
  /** The mount path ('' at the root): every link starts with it. */
  readonly base: string;
  /** This browser's CSRF token, put in every form. */
  readonly csrf: string;
  readonly readOnly: boolean;
  readonly refreshSeconds: number;
  /** Whether an archive of dead letters is configured: the Archived page is in the nav only then. */
  readonly archive: boolean;
}

export type PageName = 'overview' | 'job-types' | 'tenants' | 'dead-letters' | 'archive' | 'schedules' | 'pauses' | 'jobs' | 'job';

const NAV: readonly { readonly page: PageName; readonly path: string; readonly label: string }[] = [
  { page: 'overview', path: '/', label: 'Overview' },
  { page: 'job-types', path: '/job-types', label: 'Job types' },
  { page: 'tenants', path: '/tenants', label: 'Tenants' },
  { page: 'dead-letters', path: '/dead-letters', label: 'Dead letters' },
  { page: 'archive', path: '/archive', label: 'Archived' },
  { page: 'schedules', path: '/schedules', label: 'Schedules' },
  { page: 'pauses', path: '/pauses', label: 'Pauses' },
  { page: 'jobs', path: '/jobs', label: 'Jobs' },
  { page: 'job', path: '/job', label: 'Job lookup' },
];

/** A page's main part and whether it refreshes itself (live pages; not forms an operator fills in). */
export interface Page {
  readonly title: string;
  readonly main: Html;
  readonly live: boolean;
}

/** The whole document around a page's main part. */
export function layout(ctx: PageContext, current: PageName, page: Page): Html {
  const refresh = page.live && ctx.refreshSeconds > 0 ? ctx.refreshSeconds : undefined;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · sqs-jobs</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ctx.base}/assets/dashboard.css">
<script src="${ctx.base}/assets/dashboard.js" defer></script>
</head>
<body>
<header><strong>sqs-jobs</strong><nav>${NAV.filter((n) => n.page !== 'archive' || ctx.archive).map(
    (n) => html`<a href="${ctx.base}${n.path}"${current === n.page ? html` aria-current="page"` : ''}>${n.label}</a>`,
  )}</nav>${ctx.readOnly ? html`<span class="badge warn" title="actions are refused">read-only</span>` : ''}</header>
<main${refresh === undefined ? '' : html` data-refresh="${refresh}"`}>${page.main}</main>
</body>
</html>
`;
}

/** A hidden field with the CSRF token, for every form that acts. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="csrf" value="${ctx.csrf}">`;
}

/** A number for a table cell: whole numbers as they are, others to one decimal; `—` when unknown. */
export function num(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return Number.isInteger(value) ? value.toLocaleString('en-US') : value.toFixed(digits);
}

/** A duration in ms as people read it: 850 ms, 4.2 s, 3.1 min. */
export function ms(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  if (value < 1_000) return `${Math.round(value)} ms`;
  if (value < 120_000) return `${(value / 1000).toFixed(1)} s`;
  return `${(value / 60_000).toFixed(1)} min`;
}

/** A notice that something could not be read, naming what and why. */
export function failure(what: string, error: unknown): Html {
  const e = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return html`<p class="notice bad" role="alert">${what} could not be read: ${e}</p>`;
}
