import type { Env } from '../config/env.js';
import { toError } from '../core/errors.js';
import type { Mountable } from '../http/mountable.js';
import { SCRIPT, STYLE } from './assets.js';
import { type Acted, auditEntry, writeAudit, writeRefusal } from './audit.js';
import { type DashboardAccess, type Identity, printable } from './auth.js';
import { csrfToken, csrfValid } from './csrf.js';
import { MAX_FORM_BYTES, readForm } from './forms.js';
import { layout, type Page, type PageContext, type PageName } from './layout.js';
import type { DashboardOptions, DashboardSettings, DashboardSources } from './options.js';
import type { SweepKind } from './pages/dead-letters.js';
import { SECURITY_HEADERS, text } from './responses.js';
import { SCHEDULE_ACTIONS } from './schedule-desk.js';
import { PAUSE_ACTIONS } from './pause-desk.js';
import { Views } from './views.js';
import { resolveDashboard } from './wiring.js';

/**
 * The dashboard, on the web-standard `Request -> Response` signature: mount it with the adapters
 * of sqs-jobs/http (nodeHandler, fastifyPlugin, honoHandler), or serve it with
 * `sqs-jobs dashboard`. Pages: the queues (overview), the job types, the tenants, the dead letters (filter,
 * open, replay or purge the filtered set after a dry run), those archived to S3 (read-only), the schedules (pause, resume, run now),
 * a job by id (progress, children, cancel). Actions are form posts with a CSRF token; read-only mode refuses them (403) and shows
 * no button. With users, tokens or a trusted ALB (`auth`), every request needs one (401); `authorize`
 * is asked about every request after that; each action writes an audit line naming its user when
 * known and what it came to, refused or failed too.
 */
export class Dashboard implements Mountable {
  readonly basePath: string;
  readonly #s: DashboardSettings;
  readonly #src: DashboardSources;
  readonly #views: Views;

  constructor(settings: DashboardSettings, sources: DashboardSources) {
    this.#s = settings;
    this.#src = sources;
    this.#views = new Views(settings, sources);
    this.basePath = settings.basePath;
  }

  /** Fastify route patterns that reach it (fastifyPlugin). */
  get routes(): readonly string[] {
    return this.basePath === '' ? ['/', '/*'] : [this.basePath, `${this.basePath}/*`];
  }

  /** Whether a request for this path is the dashboard's to answer (adapters pass the others on). */
  handles(pathname: string): boolean {
    return pathname === this.basePath || pathname === `${this.basePath}/` || this.#route(pathname) !== undefined;
  }

  /** The methods served at `pathname`: POST at an action, GET and HEAD at a page or an asset. */
  allows(pathname: string): readonly string[] {
    const route = this.#route(pathname);
    if (route === undefined) return [];
    return route.startsWith('post:') ? ['POST'] : ['GET', 'HEAD'];
  }

  /** The answer to a method not served at `pathname` (405 with Allow), else 404. */
  refuse(pathname: string, method: string): Response {
    const served = this.allows(pathname);
    if (served.length === 0) return text(404, `nothing at ${pathname}`);
    const allow = served.join(', ');
    return text(405, `${method} is not served here; allowed: ${allow}`, { allow });
  }

  /** What it asks of a request: its users and tokens (counts) and the ALB whose signed header it trusts. */
  get access(): DashboardAccess {
    return this.#s.gate.access;
  }

  /** Answer one request. Never throws. */
  readonly fetch = async (request: Request): Promise<Response> => {
    try {
      // The action a post asks for (undefined: a page, an asset): refused before it is reached, it is audited too.
      const route = request.method.toUpperCase() === 'POST' ? this.#route(new URL(request.url).pathname) : undefined;
      const action = route?.startsWith('post:') ? route.slice(5) : undefined;
      const verdict = await this.#s.gate.check(request);
      if (!verdict.ok) {
        if (action !== undefined) writeRefusal(this.#s.audit, action, verdict.reason);
        return verdict.response;
      }
      let who = verdict.identity;
      if (this.#s.authorize !== undefined) {
        const answer: unknown = await this.#s.authorize(request);
        const named = answer instanceof Object && 'user' in answer && typeof answer.user === 'string' ? answer.user : undefined;
        if (named !== undefined) who = { user: printable(named), via: 'authorize' };
        else if (answer !== true) {
          const response = answer instanceof Response ? answer : text(403, 'not allowed');
          this.#refused(action, who, response.status, 'by authorize');
          return response;
        }
      }
      return await this.#answer(request, who, action);
    } catch (error) {
      const e = toError(error);
      return text(500, `the request could not be handled: ${e.name}: ${e.message}`);
    }
  };

  /** Close the clients the dashboard made. */
  close(): void {
    this.#views.close();
    this.#src.close();
  }

  /** What a path names: a page, an action, an asset; undefined: nothing here. */
  #route(pathname: string): string | undefined {
    const base = this.basePath;
    if (!pathname.startsWith(base)) return undefined;
    const rest = pathname.slice(base.length) || '/';
    return ROUTES.get(rest);
  }

  async #answer(request: Request, who: Identity, action: string | undefined): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const route = this.#route(url.pathname);
    if (route === undefined) return this.refuse(url.pathname, method);
    const refused = this.#refusedOrigin(request);
    if (refused !== undefined) {
      this.#refused(action, who, refused.response.status, refused.why);
      return refused.response;
    }
    const get = method === 'GET' || method === 'HEAD';
    if (route === 'css' && get) return new Response(STYLE, { headers: { 'content-type': 'text/css; charset=utf-8', ...SECURITY_HEADERS } });
    if (route === 'js' && get)
      return new Response(SCRIPT, { headers: { 'content-type': 'text/javascript; charset=utf-8', ...SECURITY_HEADERS } });
    const isPost = route.startsWith('post:');
    if (isPost !== (method === 'POST') || (!isPost && !get)) return this.refuse(url.pathname, method);
    const token = csrfToken(request, this.basePath || '/');
    const { readOnly, refreshSeconds } = this.#s;
    const ctx: PageContext = { base: this.basePath, csrf: token.token, readOnly, refreshSeconds, archive: this.#src.archive !== undefined };
    const headers: Record<string, string> = token.setCookie === undefined ? {} : { 'set-cookie': token.setCookie };
    const html = { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers };
    // HEAD says a page is there without reading SQS for it (a dead letters page receives messages).
    if (method === 'HEAD') return new Response(null, { headers: html });
    if (isPost) return this.#act(route.slice(5), request, ctx, html, who);
    const [name, page]: [PageName, Page] =
      route === 'result'
        ? ['dead-letters', this.#views.sweepResult(url.searchParams.get('id'), ctx)]
        : [route as PageName, await this.#views.page(route as PageName, url.searchParams, ctx)];
    return render(request, ctx, name, page, html);
  }

  /** An action (a form post): done, then its audit line written (who, what, on what, what it came to), also when refused or failed. */
  async #act(action: string, request: Request, ctx: PageContext, html: Record<string, string>, who: Identity): Promise<Response> {
    let form: URLSearchParams | undefined;
    let acted: Acted | undefined;
    let response: Response | undefined;
    try {
      form = this.#s.readOnly ? undefined : await readForm(request);
      if (this.#s.readOnly) response = text(403, 'this dashboard is read-only: actions are refused');
      else if (form === undefined) response = text(413, `a form over ${MAX_FORM_BYTES} bytes is refused`);
      else if (!csrfValid(request, form))
        response = text(403, 'the form is missing its CSRF token, or it came from another site: reload the page and try again');
      else {
        acted = await this.#do(action, form, ctx, who.user);
        const { answer } = acted;
        // A failed action's page says so, answered 502 (the store or SQS failed it).
        const name: PageName = DESK_ACTIONS.get(action)?.[0] ?? (action === 'cancel' ? 'job' : 'dead-letters');
        response = answer instanceof Response ? answer : render(request, ctx, name, answer, html, acted.outcome === 'failed' ? 502 : 200);
      }
      return response;
    } finally {
      // What a confirmed replay or purge did (from the result it redirects to); a run now's job (from the schedule it redirects to).
      const location = response?.status === 303 ? response.headers.get('location') : null;
      const done = location === null ? undefined : new URL(location, request.url).searchParams;
      const sweep = action === 'replay' || action === 'purge';
      const swept = sweep && done?.has('id') ? this.#views.sweepDone(done.get('id')!) : undefined;
      const job = done?.get('job') ?? undefined;
      writeAudit(this.#s.audit, {
        ...auditEntry(action, form, who, response?.status ?? 500, acted?.outcome),
        ...swept,
        ...(job === undefined ? {} : { job }),
      });
    }
  }

  async #do(action: string, form: URLSearchParams, ctx: PageContext, user: string | undefined): Promise<Acted> {
    if (action === 'cancel') return this.#views.cancel(form, ctx);
    const desk = DESK_ACTIONS.get(action);
    if (desk !== undefined) return this.#views.desks[desk[0]].act(desk[1] as never, form, ctx, user);
    return { answer: await this.#views.sweep(action as SweepKind, form, ctx) };
  }

  /** The audit line of an action refused before it was reached (`action` undefined: not an action, no line). */
  #refused(action: string | undefined, who: Identity, status: number, why: string): void {
    if (action !== undefined) writeAudit(this.#s.audit, { ...auditEntry(action, undefined, who, status, 'refused'), refused: why });
  }

  /**
   * Requests the dashboard does not answer: a Host it was not told to serve (`allowedHosts`: a
   * page of another site whose name was re-pointed at this address, DNS rebinding), and requests a
   * browser marks as made by another site's page for a sub-resource (an image tag pointed at the
   * dead letters page would make it read the DLQ). Following a link from elsewhere still works.
   */
  #refusedOrigin(request: Request): { response: Response; why: string } | undefined {
    const allowed = this.#s.allowedHosts;
    const host = request.headers.get('host') ?? new URL(request.url).host;
    if (allowed !== undefined && !(typeof allowed === 'function' ? allowed(host) : allowed.includes(host.toLowerCase()))) {
      return { response: text(421, `this dashboard does not answer for the host ${host}`), why: 'another host' };
    }
    const site = request.headers.get('sec-fetch-site');
    if (site === 'cross-site' && request.headers.get('sec-fetch-mode') !== 'navigate') {
      return { response: text(403, "requests made by another site's page are refused"), why: 'another site' };
    }
    return undefined;
  }
}

/** The desks' actions, by their audit name: `schedule-pause` (a schedule's), `pause` and `resume` (a queue's, job type's or tenant's). */
type DeskAction = readonly ['schedules' | 'pauses', string];
const DESK_ACTIONS: ReadonlyMap<string, DeskAction> = new Map<string, DeskAction>([
  ...SCHEDULE_ACTIONS.map((a): [string, DeskAction] => [`schedule-${a}`, ['schedules', a]]),
  ...PAUSE_ACTIONS.map((a): [string, DeskAction] => [a, ['pauses', a]]),
]);

/** Every path under the mount path, and what it is. */
const ROUTES: ReadonlyMap<string, string> = new Map([
  ['/', 'overview'],
  ['/job-types', 'job-types'],
  ['/tenants', 'tenants'],
  ['/dead-letters', 'dead-letters'],
  ['/dead-letters/result', 'result'],
  ['/archive', 'archive'],
  ['/schedules', 'schedules'],
  ['/pauses', 'pauses'],
  ['/jobs', 'jobs'],
  ['/job', 'job'],
  ['/assets/dashboard.css', 'css'],
  ['/assets/dashboard.js', 'js'],
  ['/dead-letters/replay', 'post:replay'],
  ['/dead-letters/purge', 'post:purge'],
  ['/job/cancel', 'post:cancel'],
  ...SCHEDULE_ACTIONS.map((a): [string, string] => [`/schedules/${a}`, `post:schedule-${a}`]),
  ...PAUSE_ACTIONS.map((a): [string, string] => [`/pauses/${a}`, `post:${a}`]),
]);

/** A page as the answer: whole, or only its main part when the page's own script asks (`x-sqsjobs-fragment: 1`). */
function render(request: Request, ctx: PageContext, name: PageName, page: Page, headers: Record<string, string>, status = 200): Response {
  const fragment = request.headers.get('x-sqsjobs-fragment') === '1';
  return new Response((fragment ? page.main : layout(ctx, name, page)).text, { status, headers });
}

/** The dashboard on the queues and stores `options` (and the environment) name. */
export function createDashboard(options: DashboardOptions = {}, env: Env = process.env): Dashboard {
  const { settings, sources } = resolveDashboard(options, env);
  return new Dashboard(settings, sources);
}
