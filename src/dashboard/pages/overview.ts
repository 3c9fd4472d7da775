import { queueNameOf } from '../../core/queue-url.js';
import type { Stats } from '../../ops/stats.js';
import type { AdmissionState } from '../../producer/admission/admission.js';
import type { Series } from '../../ops/series.js';
import type { Point } from '../../ports/metrics-reader.js';
import { type Html, html } from '../html.js';
import { sparkline } from '../spark.js';
import { type Page, num } from '../layout.js';

type QueueRow = Stats['queues'][number];

/** What a queue is to the one the operator named: itself, its spillover queue, a tier lane, a DLQ. */
function roleOf(name: string, dlq: boolean): string {
  if (dlq) return 'dead letters';
  if (/-spill$/.test(name)) return 'spillover';
  if (/-high(\.fifo)?$/.test(name)) return 'high lane';
  if (/-low(\.fifo)?$/.test(name)) return 'low lane';
  return 'queue';
}

function alarms(q: QueueRow['dlq'] & object, dlq: boolean, slaSeconds: number | undefined): Html {
  if (dlq) {
    const n = q.visible + q.inFlight + q.delayed;
    return n > 0
      ? html`<span class="badge bad" data-alarm="dlq">ALARM: ${n} dead letter${n === 1 ? '' : 's'}</span>`
      : html`<span class="badge ok">OK</span>`;
  }
  if (slaSeconds === undefined) return html`<span class="muted">—</span>`;
  if (q.oldestAgeSeconds === undefined)
    return html`<span class="muted" title="this server publishes no AWS/SQS metrics">age unknown</span>`;
  return q.oldestAgeSeconds > slaSeconds
    ? html`<span class="badge bad" data-alarm="age">ALARM: oldest ${q.oldestAgeSeconds} s &gt; SLA ${slaSeconds} s</span>`
    : html`<span class="badge ok">OK</span>`;
}

/** What the overview draws over the last hour: the depth samples the dashboard took, and the metrics' series. */
interface OverviewCharts {
  readonly series: Series;
  readonly depth: (url: string) => Point[];
}

function row(q: NonNullable<QueueRow['dlq']>, dlq: boolean, slaSeconds: number | undefined, base: string, charts: OverviewCharts): Html {
  const name = html`<code>${q.name}</code>`;
  const link = dlq ? html`<a href="${base}/dead-letters?dlq=${encodeURIComponent(q.name)}">${name}</a>` : name;
  return html`<tr data-queue="${q.name}">
<td>${link}</td><td>${roleOf(q.name, dlq)}</td>
<td class="n">${num(q.visible)}</td><td class="n">${num(q.inFlight)}</td><td class="n">${num(q.delayed)}</td>
<td class="n">${q.oldestAgeSeconds === undefined ? '—' : `${q.oldestAgeSeconds} s`}</td>
<td class="n">${num(q.enqueuedPerMinute)}</td>
<td>${sparkline(charts.depth(q.url), { from: charts.series.from, to: charts.series.to, label: `${q.name} waiting`, gaps: 'join' })}</td>
<td>${alarms(q, dlq, slaSeconds)}</td></tr>`;
}

/** Every queue with its DLQ, spillover queue and lanes; alarms; admission's view. */
/** How admission knows a capacity it has not measured yet (AdmissionState.basis). */
const BASIS = { kept: 'kept', drained: 'seen drained', none: 'first mark' } as const;

export function overviewPage(
  stats: Stats,
  o: {
    readonly slaSeconds: number | undefined;
    readonly admission: ReadonlyMap<string, AdmissionState>;
    readonly base: string;
    readonly charts: OverviewCharts;
  },
): Page {
  const { series } = o.charts;
  const perMinute = (points: Point[] | undefined, label: string) =>
    sparkline(points ?? [], { from: series.from, to: series.to, label, gaps: 'zero' });
  const dequeued = new Map<string, number>();
  for (const j of stats.jobs) {
    const ended = j.counts.Succeeded + j.counts.Failed + j.counts.DeadLettered;
    dequeued.set(j.queue, (dequeued.get(j.queue) ?? 0) + ended / stats.windowMinutes);
  }
  const admission = [...o.admission].map(
    ([url, a]) => html`<tr><td><code>${queueNameOf(url)}</code></td><td class="n">${num(Math.round(a.backlog))}</td>
<td class="n">${num(a.drainPerSecond)}${a.basis === 'measured' ? '' : html` <span class="muted">(${BASIS[a.basis]})</span>`}</td><td class="n">${num(Math.round(a.highWaterMark))}</td>
<td class="n">${num(a.turnsHeld)}</td>
<td>${a.backlog >= a.fillLine ? html`<span class="badge warn">refusing new requests</span>` : html`<span class="badge ok">admitting</span>`}</td></tr>`,
  );
  return {
    title: 'Overview',
    live: true,
    main: html`<h1>Queues</h1>
<table data-table="queues"><thead><tr><th>queue</th><th>role</th><th class="n">visible</th><th class="n">in flight</th><th class="n">delayed</th>
<th class="n">oldest</th><th class="n">sent / min</th><th>waiting, last hour</th><th>alarm</th></tr></thead>
<tbody>${stats.queues.map((q) => [row(q, false, o.slaSeconds, o.base, o.charts), q.dlq === undefined ? '' : row(q.dlq, true, o.slaSeconds, o.base, o.charts)])}</tbody></table>
<h2>Throughput</h2>
<table data-table="throughput"><thead><tr><th>queue</th><th class="n">sent / min (SQS), last ${stats.windowMinutes} min</th><th>last hour</th>
<th class="n">finished / min (workers), last ${stats.windowMinutes} min</th><th>last hour</th></tr></thead>
<tbody>${stats.queues.map(
      (
        q,
      ) => html`<tr data-throughput="${q.name}"><td><code>${q.name}</code></td><td class="n">${num(q.enqueuedPerMinute)}</td><td>${perMinute(series.sent.get(q.name), `${q.name} sent per minute`)}</td>
<td class="n">${num(dequeued.get(q.name) ?? 0)}</td><td>${perMinute(series.finished.get(q.name), `${q.name} finished per minute`)}</td></tr>`,
    )}</tbody></table>
${
  admission.length === 0
    ? ''
    : html`<h2>Admission (this producer's view)</h2>
<table data-table="admission"><thead><tr><th>queue</th><th class="n">backlog</th><th class="n">drain / s</th><th class="n">high-water mark</th><th class="n">turns kept</th><th>state</th></tr></thead><tbody>${admission}</tbody></table>`
}
<p class="muted">Read at ${stats.at}. "Oldest" and "sent / min" come from AWS/SQS metrics where the server publishes them; "finished / min" from the workers' own metrics; "waiting" from this dashboard's own samples (every 15 s while it runs).</p>`,
  };
}
