import { listArchived } from '../ops/archive-list.js';
import { within } from '../core/sleep.js';
import { parseFilter } from './forms.js';
import { failure, type Page, type PageContext } from './layout.js';
import type { ArchiveSource } from './options.js';
import { type ArchiveView, archivePage } from './pages/archive.js';

/** Rows a page of the archive, unless the URL's `limit` says (1 to MAX_LIMIT). */
const ARCHIVE_PAGE_LIMIT = 50;
const MAX_LIMIT = 200;
/** A page reads up to this many times its limit in records (a GET each) to find its matches, as the DLQ page looks at 5×. */
const SCAN_FACTOR = 5;
/** A page waits this long for S3 at most, then says so (its reads, bounded by SCAN_FACTOR × limit, end unheard). */
const ANSWER_WITHIN_MS = 10_000;
/** S3's longest key, in bytes: an `after` past it is no key. */
const MAX_KEY = 1_024;

/**
 * The Archived dead letters page for the URL's filter (the DLQ page's parameters), `limit` and
 * `after` (the previous page's `next`): one listArchived page, read-only. S3 failing is a
 * notice on the page, never a 500.
 */
export async function archiveView(archive: ArchiveSource | undefined, params: URLSearchParams, ctx: PageContext): Promise<Page> {
  const asked = params.get('limit')?.trim() || undefined;
  const limit = asked === undefined ? ARCHIVE_PAGE_LIMIT : /^\d+$/.test(asked) ? Number(asked) : Number.NaN;
  const after = params.get('after') || undefined;
  const parsed = parseFilter(params);
  const ok = limit >= 1 && limit <= MAX_LIMIT;
  const view: ArchiveView = {
    url: archive?.url,
    filter: 'error' in parsed ? {} : parsed.filter,
    filterError: refusal('error' in parsed ? parsed.error : undefined, ok, after),
    after,
    limit: { asked, used: ok ? limit : ARCHIVE_PAGE_LIMIT },
    list: undefined,
    problem: undefined,
  };
  if (archive === undefined || view.filterError !== undefined) return archivePage(view, ctx);
  try {
    const listing = listArchived(archive.store, archive.prefix, {
      limit: view.limit.used,
      filter: view.filter,
      maxScan: SCAN_FACTOR * view.limit.used,
      ...(after === undefined ? {} : { after }),
    });
    // Past the wait, its reads (bounded by maxScan) end unheard.
    const list = await within(listing, ANSWER_WITHIN_MS, undefined);
    if (list === undefined) {
      return archivePage(
        { ...view, problem: failure(`The archive ${archive.url}`, new Error(`S3 did not answer within ${ANSWER_WITHIN_MS / 1000} s`)) },
        ctx,
      );
    }
    return archivePage({ ...view, list }, ctx);
  } catch (error) {
    return archivePage({ ...view, problem: failure(`The archive ${archive.url}`, error) }, ctx);
  }
}

/** Why the URL's parameters were refused (the filter's, `limit`, `after`), naming the parameter; undefined: they were not. */
function refusal(filterError: string | undefined, limitOk: boolean, after: string | undefined): string | undefined {
  if (filterError !== undefined) return filterError;
  if (!limitOk) return `limit: must be a whole number 1-${MAX_LIMIT}`;
  if (after !== undefined && after.length > MAX_KEY) return `after: must be a key of the archive (at most ${MAX_KEY} characters)`;
  return undefined;
}
