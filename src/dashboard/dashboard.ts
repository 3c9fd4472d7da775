import type { Env } from '../config/env.js';
import { jobIdSchema } from '../core/envelope.js';
import { toError } from '../core/errors.js';
import { queueNameOf } from '../core/queue-url.js';
import { scanDeadLetters } from '../ops/dlq-scan.js';
import { purgeDeadLetters } from '../ops/purge.js';
import { replayDeadLetters } from '../ops/replay.js';
import { collectStats } from '../ops/stats.js';
import type { AdmissionState } from '../producer/admission/admission.js';
import type { Mountable } from '../http/mountable.js';
import { SCRIPT, STYLE } from './assets.js';
import { csrfToken, csrfValid } from './csrf.js';
import { MAX_FORM_BYTES, parseFilter, readForm } from './forms.js';
import { SECURITY_HEADERS, text } from './responses.js';
import { type Html, html } from './html.js';
import { failure, layout, type Page, type PageContext, type PageName } from './layout.js';
import type { DashboardOptions, DashboardSettings, DashboardSources } from './options.js';
import { resolveDashboard } from './wiring.js';
import { confirmPage, deadLettersPage, type DlqRef, type SweepKind, sweptPage } from './pages/dead-letters.js';
import { jobPage } from './pages/job.js';
import { jobTypesPage } from './pages/job-types.js';
import { overviewPage } from './pages/overview.js';

/** How long the DLQ list of each queue is kept (a redrive policy rarely changes). */
const DLQ_CACHE_MS = 60_000;

/**
 * The dashboard, on the web-standard `Request -> Response` signature: mount it with the adapters
 * of sqs-jobs/http (nodeHandler, fastifyPlugin, honoHandler), or serve it with
 * `sqs-jobs dashboard`. Pages: the queues (overview), the job types, the dead letters (filter,
 * open, replay or purge the filtered set after a dry run), a job by id (progress, children,
 * cancel). Actions are form posts with a CSRF token; read-only mode refuses them (403) and shows
 * no button; `authorize` is asked about every request.
 */
export class Dashboard implements Mountable {
  readonly basePath: string;
  readonly #s: DashboardSettings;
  readonly #src: DashboardSources;
  #dlqs: { at: number; refs: Promise<DlqRef[]> } | undefined;

  constructor(settings: DashboardSettings, sources: DashboardSources) {
    this.#s = settings;
    this.#src = sources;
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

  /** The answer to a method not served at `pathname` (405 with Allow), else 404. */
  refuse(pathname: string, method: string): Response {
    const route = this.#route(pathname);
    if (route === undefined) return text(404, `nothing at ${pathname}`);
    const allow = route.startsWith('post:') ? 'POST' : 'GET, HEAD';
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
    this.#src.close();
  }

  /** What a path names: a page, an action, an asset; undefined: nothing here. */
  #route(pathname: string): string | undefined {
    const base = this.basePath;
    if (!pathname.startsWith(base)) return undefined;
    const rest = pathname.slice(base.length) || '/';
    const routes: Record<string, string> = {
      '/': 'overview',
      '/job-types': 'job-types',
      '/dead-letters': 'dead-letters',
      '/job': 'job',
      '/assets/dashboard.css': 'css',
      '/assets/dashboard.js': 'js',
      '/dead-letters/replay': 'post:replay',
      '/dead-letters/purge': 'post:purge',
      '/job/cancel': 'post:cancel',
    };
    return routes[rest];
  }

  async #answer(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const route = this.#route(url.pathname);
    if (route === undefined) return this.refuse(url.pathname, method);
    const get = method === 'GET' || method === 'HEAD';
    if (route === 'css' && get) return new Response(STYLE, { headers: { 'content-type': 'text/css; charset=utf-8', ...SECURITY_HEADERS } });
    if (route === 'js' && get)
      return new Response(SCRIPT, { headers: { 'content-type': 'text/javascript; charset=utf-8', ...SECURITY_HEADERS } });
    const isPost = route.startsWith('post:');
    if (isPost !== (method === 'POST') || (!isPost && !get)) return this.refuse(url.pathname, method);
    const token = csrfToken(request, `${this.basePath}/`);
    const ctx: PageContext = { base: this.basePath, csrf: token.token, readOnly: this.#s.readOnly, refreshSeconds: this.#s.refreshSeconds };
    const headers: Record<string, string> = token.setCookie === undefined ? {} : { 'set-cookie': token.setCookie };
    let page: Page | Response;
    let name: PageName;
    if (isPost) {
      if (this.#s.readOnly) return text(403, 'this dashboard is read-only: actions are refused');
      const form = await readForm(request);
      if (form === undefined) return text(413, `a form over ${MAX_FORM_BYTES} bytes is refused`);
      if (!csrfValid(request, form))
        return text(403, 'the form is missing its CSRF token, or it came from another site: reload the page and try again');
      [name, page] =
        route === 'post:cancel'
          ? ['job', await this.#cancel(form, ctx)]
          : ['dead-letters', await this.#sweep(route.slice(5) as SweepKind, form, ctx)];
    } else {
      name = route as PageName;
      page = await this.#page(name, url.searchParams, ctx);
    }
    if (page instanceof Response) return page;
    const fragment = request.headers.get('x-sqsjobs-fragment') === '1';
    const body = fragment ? page.main : layout(ctx, name, page);
    return new Response(method === 'HEAD' ? null : body.text, {
      headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...headers },
    });
  }

  async #page(name: PageName, params: URLSearchParams, ctx: PageContext): Promise<Page> {
    if (name === 'overview' || name === 'job-types') {
      let stats: Awaited<ReturnType<typeof collectStats>>;
      try {
        stats = await collectStats(this.#src, {
          queueUrls: this.#s.queues,
          namespace: this.#s.namespace,
          windowMinutes: this.#s.windowMinutes,
        });
      } catch (error) {
        return { title: 'Overview', live: true, main: failure('The queues', error) };
      }
      if (name === 'job-types') return jobTypesPage(stats);
      const admission = new Map<string, AdmissionState>();
      for (const q of stats.queues) {
        const a = this.#src.admission?.(q.url);
        if (a !== undefined) admission.set(q.url, a);
      }
      return overviewPage(stats, { slaSeconds: this.#s.slaSeconds, admission, base: this.basePath });
    }
    if (name === 'dead-letters') return this.#deadLetters(params, ctx);
    return this.#job(params.get('id') ?? undefined, ctx, undefined);
  }

  async #deadLetters(params: URLSearchParams, ctx: PageContext): Promise<Page> {
    let dlqs: DlqRef[];
    try {
      dlqs = await this.#dlqRefs();
    } catch (error) {
      return { title: 'Dead letters', live: false, main: failure('The queues’ redrive policies', error) };
    }
    const dlq = dlqs.find((d) => d.name === params.get('dlq')) ?? dlqs[0];
    if (dlq === undefined)
      return {
        title: 'Dead letters',
        live: false,
        main: html`<p class="notice">None of the queues shown has a DLQ (a redrive policy).</p>`,
      };
    const parsed = parseFilter(params);
    const filter = 'error' in parsed ? {} : parsed.filter;
    const filterError = 'error' in parsed ? parsed.error : undefined;
    let scan: Awaited<ReturnType<typeof scanDeadLetters>> | undefined;
    let depth: { visible: number; inFlight: number } | undefined;
    let problem: Html | undefined;
    if (filterError === undefined) {
      try {
        // Counted before the scan: the scan itself holds what it reads (in flight) while it reads.
        depth = await this.#src.admin.counts(dlq.url);
        scan = await scanDeadLetters(this.#src.queue, dlq.url, { limit: this.#s.deadLetterLimit, filter });
      } catch (error) {
        problem = failure(`The DLQ ${dlq.name}`, error);
      }
    }
    return deadLettersPage({ dlqs, dlq, filter, filterError, scan, depth, problem, limit: this.#s.deadLetterLimit }, ctx);
  }

  /** A replay or purge of the filtered set: without `confirm`, the dry run; with it, at most that many. */
  async #sweep(kind: SweepKind, form: URLSearchParams, ctx: PageContext): Promise<Page | Response> {
    const dlq = (await this.#dlqRefs()).find((d) => d.name === form.get('dlq'));
    if (dlq === undefined) return text(422, 'dlq: must name a DLQ of the queues shown');
    const parsed = parseFilter(form);
    if ('error' in parsed) return text(422, parsed.error);
    const confirm = form.get('confirm');
    const limit = confirm === null ? undefined : Number(confirm);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1))
      return text(422, 'confirm: must be the whole number of messages the dry run found');
    const options = { dlqUrl: dlq.url, filter: parsed.filter, dryRun: limit === undefined, ...(limit === undefined ? {} : { limit }) };
    const result =
      kind === 'replay'
        ? await replayDeadLetters(this.#src.queue, { ...options, sourceQueueUrl: dlq.sourceQueueUrl })
        : await purgeDeadLetters(this.#src.queue, options);
    return limit === undefined ? confirmPage(kind, dlq, parsed.filter, result, ctx) : sweptPage(kind, dlq, parsed.filter, result, ctx);
  }

  async #cancel(form: URLSearchParams, ctx: PageContext): Promise<Page | Response> {
    const id = form.get('id') ?? '';
    if (!jobIdSchema.safeParse(id).success) return text(422, 'id: must be a job id');
    if (this.#src.cancel === undefined)
      return text(409, 'cancel needs the job store and the workers’ memcached (SQS_JOBS_JOB_TABLE and SQS_JOBS_MEMCACHED)');
    const result = await this.#src.cancel(id);
    return this.#job(id, ctx, result);
  }

  async #job(id: string | undefined, ctx: PageContext, cancelled: Parameters<typeof jobPage>[0]['cancelled']): Promise<Page> {
    const cancellable = this.#src.cancel !== undefined;
    const base = { id, cancellable, cancelled, status: undefined };
    if (id === undefined || id === '') return jobPage({ ...base, id: undefined, problem: undefined }, ctx);
    if (this.#src.store === undefined) {
      return jobPage(
        {
          ...base,
          problem: html`<p class="notice">Job status is not kept here: no job store (SQS_JOBS_JOB_TABLE or the store option).</p>`,
        },
        ctx,
      );
    }
    if (!jobIdSchema.safeParse(id).success)
      return jobPage({ ...base, problem: html`<p class="notice bad">id: must be a job id (1-128 of letters, digits, - _ . : /)</p>` }, ctx);
    try {
      return jobPage({ ...base, status: await this.#src.store.get(id), problem: undefined }, ctx);
    } catch (error) {
      return jobPage({ ...base, problem: failure('The job store', error) }, ctx);
    }
  }

  /** Each queue's DLQ (from its redrive policy), once per DLQ; kept for a minute. */
  #dlqRefs(): Promise<DlqRef[]> {
    const now = Date.now();
    if (this.#dlqs === undefined || now - this.#dlqs.at > DLQ_CACHE_MS) {
      const refs = Promise.all(
        this.#s.queues.map(async (url) => {
          const target = await this.#src.queue.deadLetterTarget(url);
          return target === undefined
            ? undefined
            : { name: queueNameOf(target.deadLetterQueueUrl), url: target.deadLetterQueueUrl, sourceQueueUrl: url };
        }),
      ).then((all) => all.filter((r): r is DlqRef => r !== undefined).filter((r, i, a) => a.findIndex((x) => x.url === r.url) === i));
      this.#dlqs = { at: now, refs };
      refs.catch(() => {
        this.#dlqs = undefined;
      });
    }
    return this.#dlqs.refs;
  }
}

/** The dashboard on the queues and stores `options` (and the environment) name. */
export function createDashboard(options: DashboardOptions = {}, env: Env = process.env): Dashboard {
  const { settings, sources } = resolveDashboard(options, env);
  return new Dashboard(settings, sources);
}
