import type { ScheduleView } from '../ops/schedule-view.js';
import type { Schedules } from '../ops/schedules.js';
import type { StatusStore } from '../ports/status-store.js';
import { jobIdSchema } from '../core/envelope.js';
import type { Acted } from './audit.js';
import { html, query } from './html.js';
import { failure, type Page, type PageContext } from './layout.js';
import { type ScheduleNotice, schedulePage, schedulesPage } from './pages/schedules.js';
import { text } from './responses.js';

/** What can be done to a schedule from the dashboard. */
export type ScheduleAction = 'pause' | 'resume' | 'trigger';
/** Every schedule action, each at `/schedules/<action>`. */
export const SCHEDULE_ACTIONS: readonly ScheduleAction[] = ['pause', 'resume', 'trigger'];

/** What an action did, from the URL it redirected to. */
function noticeOf(params: URLSearchParams): ScheduleNotice | undefined {
  const done = params.get('done');
  if (done === 'paused' || done === 'resumed') return { kind: done };
  const job = params.get('job') ?? '';
  return done === 'triggered' && jobIdSchema.safeParse(job).success ? { kind: 'triggered', jobId: job } : undefined;
}

/** A page shows at least this many schedules when there are as many (the store's pages hold up to 100 each). */
const PAGE_ROWS = 50;

const NO_STORE = html`<p class="notice">Schedules are kept in the job store: none is configured here (SQS_JOBS_JOB_TABLE or the store option), or it keeps no schedules.</p>`;

/** The Schedules pages and their actions, on the job store's schedules (ops/schedules.ts) and the records of their jobs. */
export class ScheduleDesk {
  readonly #schedules: Schedules | undefined;
  readonly #store: StatusStore | undefined;

  constructor(schedules: Schedules | undefined, store: StatusStore | undefined) {
    this.#schedules = schedules;
    this.#store = store;
  }

  /** `?id=`: one schedule (`&done=`: what an action just did to it); else a page of all (`?cursor=`: the next). */
  async page(params: URLSearchParams, ctx: PageContext): Promise<Page> {
    const schedules = this.#schedules;
    if (schedules === undefined) return { title: 'Schedules', live: false, main: NO_STORE };
    const id = params.get('id');
    try {
      if (id === null || id === '') {
        // The store's pages follow its shards: read on until a page is full enough to show.
        const shown: ScheduleView[] = [];
        let cursor = params.get('cursor') ?? undefined;
        do {
          const page = await schedules.list(cursor);
          shown.push(...page.schedules);
          cursor = page.cursor;
        } while (cursor !== undefined && shown.length < PAGE_ROWS);
        return schedulesPage({ schedules: shown, cursor, problem: undefined }, ctx);
      }
      const view = await schedules.get(id);
      if (view === undefined)
        return { title: 'Schedules', live: false, main: html`<p class="notice" data-not-found>No schedule <code>${id}</code>.</p>` };
      const recent = await Promise.all(
        view.recent.map(async (o) => ({ ...o, status: await this.#store?.get(o.jobId).catch(() => undefined) })),
      );
      return schedulePage({ view, recent, notice: noticeOf(params) }, ctx);
    } catch (error) {
      return schedulesPage({ schedules: [], cursor: undefined, problem: failure('The schedules', error) }, ctx);
    }
  }

  /**
   * Pause, resume or run now (a form post, its CSRF token checked already); then 303 to the
   * schedule, saying what was done (a reload shows it again and does nothing). A failure is a page
   * saying it (`failed`: answered 502); no such schedule, 404 (`not found`).
   */
  async act(action: ScheduleAction, form: URLSearchParams, ctx: PageContext): Promise<Acted> {
    const schedules = this.#schedules;
    if (schedules === undefined) return { answer: text(409, 'schedules need the job store (SQS_JOBS_JOB_TABLE or the store option)') };
    const id = form.get('id') ?? '';
    if (id === '' || id.length > 200) return { answer: text(422, 'id: must name a schedule') };
    let done: Record<string, string> | undefined;
    try {
      if (action === 'trigger') {
        const sent = await schedules.trigger(id);
        done = sent === undefined ? undefined : { done: 'triggered', job: sent.jobId };
      } else if (await (action === 'pause' ? schedules.pause(id) : schedules.resume(id))) {
        done = { done: action === 'pause' ? 'paused' : 'resumed' };
      }
    } catch (error) {
      const main = failure(`The ${action === 'trigger' ? 'run' : action} of ${id}`, error);
      return { answer: { title: `Schedule ${id}`, live: false, main }, outcome: 'failed' };
    }
    if (done === undefined) return { answer: text(404, `no schedule ${id}`), outcome: 'not found' };
    return { answer: new Response(null, { status: 303, headers: { location: `${ctx.base}/schedules${query({ id, ...done })}` } }) };
  }

  close(): void {
    this.#schedules?.close();
  }
}
