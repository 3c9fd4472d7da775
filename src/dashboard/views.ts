import { jobIdSchema } from '../core/envelope.js';
import { queueNameOf } from '../core/queue-url.js';
import { scanDeadLetters } from '../ops/dlq-scan.js';
import { collectSeries } from '../ops/series.js';
import { collectStats, companionsOf } from '../ops/stats.js';
import { TENANT_REPORTS_KEPT_MINUTES } from '../ports/tenant-meter.js';
import type { AdmissionState } from '../producer/admission/admission.js';
import { archiveView } from './archive-view.js';
import { type Acted, CANCEL_OUTCOMES } from './audit.js';
import { parseFilter } from './forms.js';
import { DepthHistory } from './history.js';
import { type Html, html } from './html.js';
import { failure, type Page, type PageContext, type PageName } from './layout.js';
import type { DashboardSettings, DashboardSources } from './options.js';
import { deadLettersPage, type DlqRef, type SweepKind } from './pages/dead-letters.js';
import { jobsView } from './job-search.js';
import { jobPage } from './pages/job.js';
import { jobTypesPage } from './pages/job-types.js';
import { overviewPage } from './pages/overview.js';
import { type SpillRow, tenantsPage } from './pages/tenants.js';
import { isTenantOrder, summarizeTenants, type TenantsView } from './tenant-summary.js';
import { text } from './responses.js';
import { ScheduleDesk } from './schedule-desk.js';
import { PauseDesk } from './pause-desk.js';
import { SweepDesk, type SweepSummary } from './sweeps.js';

/** The charts' window: the last hour. */
const CHART_MINUTES = 60;
/** A page of dead letters looks at up to this many times `deadLetterLimit` messages to find its matches. */
const SCAN_FACTOR = 5;
/** How long the DLQ list of each queue is kept (a redrive policy rarely changes). */
const DLQ_CACHE_MS = 60_000;

/** What each page shows and what each action does: read from SQS, the metrics and the job store, and rendered. */
export class Views {
  readonly #s: DashboardSettings;
  readonly #src: DashboardSources;
  readonly #history: DepthHistory;
  readonly #desk: SweepDesk;
  /** The pages with actions of their own: a desk each (dashboard.ts routes their posts). */
  readonly desks: { readonly schedules: ScheduleDesk; readonly pauses: PauseDesk };
  #dlqs: { at: number; refs: Promise<DlqRef[]> } | undefined;

  constructor(settings: DashboardSettings, sources: DashboardSources) {
    this.#s = settings;
    this.#src = sources;
    this.#history = new DepthHistory(sources.admin);
    this.#desk = new SweepDesk(sources.queue);
    this.desks = { schedules: new ScheduleDesk(sources.schedules, sources.store), pauses: new PauseDesk(sources.pauses) };
  }

  close(): void {
    this.#history.close();
  }

  async page(name: PageName, params: URLSearchParams, ctx: PageContext): Promise<Page> {
    if (name === 'overview' || name === 'job-types') {
      let stats: Awaited<ReturnType<typeof collectStats>>;
      try {
        stats = await collectStats(this.#src, {
          queueUrls: this.#s.queues,
          namespace: this.#s.namespace,
          windowMinutes: this.#s.windowMinutes,
        });
      } catch (error) {
        return { title: name === 'overview' ? 'Overview' : 'Job types', live: true, main: failure('The queues', error) };
      }
      const series = await collectSeries(this.#src.metrics, {
        queues: stats.queues.map((q) => q.name),
        jobs: stats.jobs.map((j) => ({ job: j.job, queue: j.queue })),
        namespace: this.#s.namespace,
        minutes: CHART_MINUTES,
      });
      if (name === 'job-types') return jobTypesPage(stats, series);
      const read = new Map(
        stats.queues.flatMap((q) => [q, ...(q.dlq === undefined ? [] : [q.dlq])]).map((q) => [q.url, q.visible + q.delayed]),
      );
      this.#history.watch([...read.keys()], read);
      const admission = new Map<string, AdmissionState>();
      for (const q of stats.queues) {
        const a = this.#src.admission?.(q.url);
        if (a !== undefined) admission.set(q.url, a);
      }
      const charts = { series, depth: (url: string) => this.#history.of(url) };
      return overviewPage(stats, { slaSeconds: this.#s.slaSeconds, admission, base: this.#s.basePath, charts });
    }
    if (name === 'tenants') return this.#tenants(params, ctx);
    if (name === 'schedules' || name === 'pauses') return this.desks[name].page(params, ctx);
    if (name === 'dead-letters') return this.#deadLetters(params, ctx);
    if (name === 'archive') return archiveView(this.#src.archive, params, ctx);
    if (name === 'jobs') return jobsView(this.#src.store, params, ctx);
    return this.#job(params.get('id') ?? undefined, ctx, undefined);
  }

  /** Each tenant as the workers reported it (through the tenant meter), over each queue with its spillover queue and lanes. */
  async #tenants(params: URLSearchParams, ctx: PageContext): Promise<Page> {
    const windowMinutes = Math.min(this.#s.windowMinutes, TENANT_REPORTS_KEPT_MINUTES);
    const sort = params.get('sort');
    const filter = { tenant: (params.get('tenant') ?? '').slice(0, 128), sort: isTenantOrder(sort) ? sort : ('wait' as const) };
    const { admin, tenants: meter } = this.#src;
    const counts = (url: string) => admin.counts(url).catch(() => undefined);
    const families = await Promise.all(this.#s.queues.map(async (url) => ({ url, companions: await companionsOf(admin, url) })));
    const spill = await Promise.all(
      families.map(async ({ url, companions }): Promise<SpillRow> => {
        const spillUrl = companions.find((u) => /-spill$/.test(queueNameOf(u)));
        const [main, spilled] = await Promise.all([counts(url), spillUrl === undefined ? undefined : counts(spillUrl)]);
        return {
          queue: queueNameOf(url),
          main,
          spill: spillUrl === undefined ? undefined : { name: queueNameOf(spillUrl), counts: spilled },
        };
      }),
    );
    let view: TenantsView | undefined;
    let problem: Html | undefined;
    if (meter !== undefined) {
      const to = Date.now();
      const from = to - windowMinutes * 60_000;
      const urls = families.flatMap(({ url, companions }) => [url, ...companions]);
      const reports = await Promise.all(urls.map((url) => meter.read(url, from)));
      if (reports.some((r) => r === undefined)) problem = failure('The workers’ tenant reports', new Error('memcached did not answer'));
      else view = summarizeTenants(new Map(urls.map((url, i) => [queueNameOf(url), reports[i]!])), from, to);
    }
    return tenantsPage({ view, problem, spill, windowMinutes, filter }, ctx);
  }

  async #deadLetters(params: URLSearchParams, ctx: PageContext): Promise<Page> {
    let dlqs: DlqRef[];
    try {
      dlqs = await this.#dlqRefs();
    } catch (error) {
      return { title: 'Dead letters', live: false, main: failure('The queues’ redrive policies', error) };
    }
    const dlq = dlqs.find((d) => d.key === params.get('dlq')) ?? dlqs[0];
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
        scan = await scanDeadLetters(this.#src.queue, dlq.url, {
          limit: this.#s.deadLetterLimit,
          filter,
          maxScan: SCAN_FACTOR * this.#s.deadLetterLimit,
        });
      } catch (error) {
        problem = failure(`The DLQ ${dlq.name}`, error);
      }
    }
    return deadLettersPage({ dlqs, dlq, filter, filterError, scan, depth, problem, limit: this.#s.deadLetterLimit }, ctx);
  }

  /** A replay or purge: with `confirmation`, the confirmed action (redirected to its result); without, the dry run. */
  async sweep(kind: SweepKind, form: URLSearchParams, ctx: PageContext): Promise<Page | Response> {
    const confirmation = form.get('confirmation');
    if (confirmation !== null) return this.#desk.confirm(confirmation, ctx);
    const dlq = (await this.#dlqRefs()).find((d) => d.key === form.get('dlq'));
    if (dlq === undefined) return text(422, 'dlq: must name a DLQ of the queues shown');
    const parsed = parseFilter(form);
    if ('error' in parsed) return text(422, parsed.error);
    return this.#desk.dryRun(kind, dlq, parsed.filter, ctx);
  }

  /** What a confirmed replay or purge did. */
  sweepResult(id: string | null, ctx: PageContext): Page {
    return this.#desk.result(id, ctx);
  }

  /** What a confirmed replay or purge did (by its result's id), for the audit line. */
  sweepDone(id: string): SweepSummary | undefined {
    return this.#desk.summary(id);
  }

  /** Cancel a job; the page of the job says what it came to (cancelled, already ended, not found). */
  async cancel(form: URLSearchParams, ctx: PageContext): Promise<Acted> {
    const id = form.get('id') ?? '';
    if (!jobIdSchema.safeParse(id).success) return { answer: text(422, 'id: must be a job id') };
    if (this.#src.cancel === undefined)
      return { answer: text(409, 'cancel needs the job store and the workers’ memcached (SQS_JOBS_JOB_TABLE and SQS_JOBS_MEMCACHED)') };
    const result = await this.#src.cancel(id);
    return { answer: await this.#job(id, ctx, result), outcome: CANCEL_OUTCOMES[result.outcome] };
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
      return jobPage({ ...base, problem: html`<p class="notice bad">id: must be a job id (1-128 of letters, digits, - _ . :)</p>` }, ctx);
    try {
      return jobPage({ ...base, status: await this.#src.store.get(id), problem: undefined }, ctx);
    } catch (error) {
      return jobPage({ ...base, problem: failure('The job store', error) }, ctx);
    }
  }

  /**
   * Each queue's DLQ (from its redrive policy), once per DLQ; kept for a minute. A DLQ several
   * queues share sends back only the messages that name their source (ours do; SQS's own redrive
   * does not say). Keyed by name, or by URL where names repeat (two accounts).
   */
  #dlqRefs(): Promise<DlqRef[]> {
    const now = Date.now();
    if (this.#dlqs === undefined || now - this.#dlqs.at > DLQ_CACHE_MS) {
      const refs = Promise.all(
        this.#s.queues.map(async (url) => ({ url, target: (await this.#src.queue.deadLetterTarget(url))?.deadLetterQueueUrl })),
      ).then((all) => {
        const sources = new Map<string, string[]>();
        for (const { url, target } of all) if (target !== undefined) sources.set(target, [...(sources.get(target) ?? []), url]);
        const names = [...sources.keys()].map(queueNameOf);
        return [...sources].map(([dlqUrl, from]): DlqRef => {
          const name = queueNameOf(dlqUrl);
          return {
            key: names.filter((n) => n === name).length > 1 ? dlqUrl : name,
            name,
            url: dlqUrl,
            sourceQueueUrl: from.length === 1 ? from[0] : undefined,
          };
        });
      });
      this.#dlqs = { at: now, refs };
      refs.catch(() => {
        this.#dlqs = undefined;
      });
    }
    return this.#dlqs.refs;
  }
}
