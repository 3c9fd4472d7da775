import type { Env } from '../config/env.js';
import { toError } from '../core/errors.js';
import type { Mountable } from '../http/mountable.js';
import { SCRIPT, STYLE } from './assets.js';
import { csrfToken, csrfValid } from './csrf.js';
import { MAX_FORM_BYTES, readForm } from './forms.js';
import { layout, type Page, type PageContext, type PageName } from './layout.js';
import type { DashboardOptions, DashboardSettings, DashboardSources } from './options.js';
import type { SweepKind } from './pages/dead-letters.js';
import { SECURITY_HEADERS, text } from './responses.js';
import { SCHEDULE_ACTIONS, type ScheduleAction } from './schedule-desk.js';
import { Views } from './views.js';
import { resolveDashboard } from './wiring.js';

/**
 * The dashboard, on the web-standard `Request -> Response` signature: mount it with the adapters
 * of sqs-jobs/http (nodeHandler, fastifyPlugin, honoHandler), or serve it with
 * `sqs-jobs dashboard`. Pages: the queues (overview), the job types, the tenants, the dead letters (filter,
 * open, replay or purge the filtered set after a dry run), the schedules (pause, resume, run now),
 * a job by id (progress, children, cancel). Actions are form posts with a CSRF token; read-only mode refuses them (403) and shows
 * no button; `authorize` is asked about every request.
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

  /** Answer one request. Never throws. */
  readonly fetch = async (request: Request): Promise<Response> => {
    try {
      if (this.#s.authorize !== undefined) {
        const verdict = await this.#s.authorize(request);
        if (verdict instanceof Response) return verdict;
        if (verdict !== true) return text(403, 'not allowed');
      }
      return await this.#answer(request);
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

  async #answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const route = this.#route(url.pathname);
    if (route === undefined) return this.refuse(url.pathname, method);
    const refused = this.#refusedOrigin(request);
    if (refused !== undefined) return refused;
    const get = method === 'GET' || method === 'HEAD';
    if (route === 'css' && get) return new Response(STYLE, { headers: { 'content-type': 'text/css; charset=utf-8', ...SECURITY_HEADERS } });
    if (route === 'js' && get)
      return new Response(SCRIPT, { headers: { 'content-type': 'text/javascript; charset=utf-8', ...SECURITY_HEADERS } });
    const isPost = route.startsWith('post:');
    if (isPost !== (method === 'POST') || (!isPost && !get)) return this.refuse(url.pathname, method);
    const token = csrfToken(request, this.basePath || '/');
    const ctx: PageContext = { base: this.basePath, csrf: token.token, readOnly: this.#s.readOnly, refreshSeconds: this.#s.refreshSeconds };
    const headers: Record<string, string> = token.setCookie === undefined ? {} : { 'set-cookie': token.setCookie };
    const html = { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers };
    // HEAD says a page is there without reading SQS for it (a dead letters page receives messages).
    if (method === 'HEAD') return new Response(null, { headers: html });
    let page: Page | Response;
    let name: PageName;
    if (isPost) {
      if (this.#s.readOnly) return text(403, 'this dashboard is read-only: actions are refused');
      const form = await readForm(request);
      if (form === undefined) return text(413, `a form over ${MAX_FORM_BYTES} bytes is refused`);
      if (!csrfValid(request, form))
        return text(403, 'the form is missing its CSRF token, or it came from another site: reload the page and try again');
      const action = route.slice(5);
      [name, page] =
        route === 'post:cancel'
          ? ['job', await this.#views.cancel(form, ctx)]
          : action.startsWith('schedule-')
            ? ['schedules', await this.#views.scheduleAction(action.slice(9) as ScheduleAction, form, ctx)]
            : ['dead-letters', await this.#views.sweep(action as SweepKind, form, ctx)];
    } else if (route === 'result') {
      [name, page] = ['dead-letters', this.#views.sweepResult(url.searchParams.get('id'), ctx)];
    } else {
      name = route as PageName;
      page = await this.#views.page(name, url.searchParams, ctx);
    }
    if (page instanceof Response) return page;
    const fragment = request.headers.get('x-sqsjobs-fragment') === '1';
    return new Response((fragment ? page.main : layout(ctx, name, page)).text, { headers: html });
  }

  /**
   * Requests the dashboard does not answer: a Host it was not told to serve (`allowedHosts`: a
   * page of another site whose name was re-pointed at this address, DNS rebinding), and requests a
   * browser marks as made by another site's page for a sub-resource (an image tag pointed at the
   * dead letters page would make it read the DLQ). Following a link from elsewhere still works.
   */
  #refusedOrigin(request: Request): Response | undefined {
    const allowed = this.#s.allowedHosts;
    const host = request.headers.get('host') ?? new URL(request.url).host;
    if (allowed !== undefined && !(typeof allowed === 'function' ? allowed(host) : allowed.includes(host.toLowerCase()))) {
      return text(421, `this dashboard does not answer for the host ${host}`);
    }
    const site = request.headers.get('sec-fetch-site');
    if (site === 'cross-site' && request.headers.get('sec-fetch-mode') !== 'navigate') {
      return text(403, "requests made by another site's page are refused");
    }
    return undefined;
  }
}

/** Every path under the mount path, and what it is. */
const ROUTES: ReadonlyMap<string, string> = new Map([
  ['/', 'overview'],
  ['/job-types', 'job-types'],
  ['/tenants', 'tenants'],
  ['/dead-letters', 'dead-letters'],
  ['/dead-letters/result', 'result'],
  ['/schedules', 'schedules'],
  ['/job', 'job'],
  ['/assets/dashboard.css', 'css'],
  ['/assets/dashboard.js', 'js'],
  ['/dead-letters/replay', 'post:replay'],
  ['/dead-letters/purge', 'post:purge'],
  ['/job/cancel', 'post:cancel'],
  ...SCHEDULE_ACTIONS.map((a): [string, string] => [`/schedules/${a}`, `post:schedule-${a}`]),
]);

/** The dashboard on the queues and stores `options` (and the environment) name. */
export function createDashboard(options: DashboardOptions = {}, env: Env = process.env): Dashboard {
  const { settings, sources } = resolveDashboard(options, env);
  return new Dashboard(settings, sources);
}
