import { ConfigError } from '../core/errors.js';
import { MAX_PAUSE_BY, type PauseScope } from '../core/pause.js';
import { queueNameOf } from '../core/queue-url.js';
import type { Pauses } from '../ops/pauses.js';
import { everySeconds } from '../schedules/every.js';
import type { Acted } from './audit.js';
import { html, query } from './html.js';
import { failure, type Page, type PageContext } from './layout.js';
import { type PauseNotice, pausesPage } from './pages/pauses.js';
import { text } from './responses.js';

/** What can be done to a pause from the dashboard, each at `/pauses/<action>`. */
export type PauseAction = 'pause' | 'resume';
/** Every pause action. */
export const PAUSE_ACTIONS: readonly PauseAction[] = ['pause', 'resume'];

const NO_STORE = html`<p class="notice">Pauses are kept in the job store: none is configured here (SQS_JOBS_JOB_TABLE or the store option).</p>`;

/** The scope a form names: queue, or job and/or tenant (blank fields are not given). */
function scopeOf(form: URLSearchParams): PauseScope {
  const field = (name: string) => {
    const v = (form.get(name) ?? '').trim();
    return v === '' ? undefined : v;
  };
  const [given, job, tenant] = [field('queue'), field('job'), field('tenant')];
  const queue = given?.includes('/') ? queueNameOf(given) : given;
  return { ...(queue === undefined ? {} : { queue }), ...(job === undefined ? {} : { job }), ...(tenant === undefined ? {} : { tenant }) };
}

function noticeOf(params: URLSearchParams): PauseNotice | undefined {
  const done = params.get('done');
  return done === 'paused' || done === 'resumed' || done === 'not-paused' ? { kind: done } : undefined;
}

/** The Pauses page and its actions, on the pauses kept in the job store (ops/pauses.ts). */
export class PauseDesk {
  readonly #pauses: Pauses | undefined;

  constructor(pauses: Pauses | undefined) {
    this.#pauses = pauses;
  }

  /** Every pause kept, those in force first (`?done=`: what an action just did). */
  async page(params: URLSearchParams, ctx: PageContext): Promise<Page> {
    if (this.#pauses === undefined) return { title: 'Pauses', live: false, main: NO_STORE };
    try {
      return pausesPage({ pauses: await this.#pauses.list(), notice: noticeOf(params), problem: undefined }, ctx);
    } catch (error) {
      return pausesPage({ pauses: [], notice: undefined, problem: failure('The pauses', error) }, ctx);
    }
  }

  /**
   * Pause or resume (a form post, its CSRF token checked already), `by` the signed-in user when
   * known; then 303 to the list, saying what was done. Bad input: 422 naming the field, nothing stored.
   */
  async act(action: PauseAction, form: URLSearchParams, ctx: PageContext, user: string | undefined): Promise<Acted> {
    const pauses = this.#pauses;
    if (pauses === undefined) return { answer: text(409, 'pauses need the job store (SQS_JOBS_JOB_TABLE or the store option)') };
    const scope = scopeOf(form);
    let done: string;
    try {
      if (action === 'pause') {
        const forText = (form.get('for') ?? '').trim();
        const forSeconds = forText === '' ? undefined : everySeconds(forText);
        if (forText !== '' && forSeconds === undefined)
          return {
            answer: text(422, `for "${forText}": must be whole units of d, h, m and s, such as 30s, 10m or 1h30m`),
            outcome: 'refused',
          };
        const reason = (form.get('reason') ?? '').trim();
        await pauses.pause(scope, {
          ...(forSeconds === undefined ? {} : { forSeconds }),
          ...(reason === '' ? {} : { reason }),
          by: user === undefined ? 'dashboard' : `${user.slice(0, MAX_PAUSE_BY - 12)} (dashboard)`,
        });
        done = 'paused';
      } else {
        done = (await pauses.resume(scope)).resumed ? 'resumed' : 'not-paused';
      }
    } catch (error) {
      if (error instanceof ConfigError) return { answer: text(422, error.message), outcome: 'refused' };
      return { answer: { title: 'Pauses', live: false, main: failure(`The ${action}`, error) }, outcome: 'failed' };
    }
    return {
      answer: new Response(null, { status: 303, headers: { location: `${ctx.base}/pauses${query({ done })}` } }),
      ...(done === 'not-paused' ? { outcome: 'not found' as const } : {}),
    };
  }

  close(): void {
    this.#pauses?.close();
  }
}
