import { queueNameOf } from '../../core/queue-url.js';
import type { Stats } from '../../ops/stats.js';
import type { AdmissionState } from '../../producer/admission/admission.js';
import { type Html, html } from '../html.js';
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

function row(q: NonNullable<QueueRow['dlq']>, dlq: boolean, slaSeconds: number | undefined, base: string): Html {
  const name = html`<code>${q.name}</code>`;
  const link = dlq ? html`<a href="${base}/dead-letters?dlq=${encodeURIComponent(q.name)}">${name}</a>` : name;
  return html`<tr data-queue="${q.name}">
<td>${link}</td><td>${roleOf(q.name, dlq)}</td>
<td class="n">${num(q.visible)}</td><td class="n">${num(q.inFlight)}</td><td class="n">${num(q.delayed)}</td>
<td class="n">${q.oldestAgeSeconds === undefined ? '—' : `${q.oldestAgeSeconds} s`}</td>
<td class="n">${num(q.enqueuedPerMinute)}</td>
<td>${alarms(q, dlq, slaSeconds)}</td></tr>`;
}

/** Every queue with its DLQ, spillover queue and lanes; alarms; admission's view. */
export function overviewPage(
  stats: Stats,
  o: { readonly slaSeconds: number | undefined; readonly admission: ReadonlyMap<string, AdmissionState>; readonly base: string },
): Page {
  const dequeued = new Map<string, number>();
  for (const j of stats.jobs) {
    const ended = j.counts.Succeeded + j.counts.Failed + j.counts.DeadLettered;
    dequeued.set(j.queue, (dequeued.get(j.queue) ?? 0) + ended / stats.windowMinutes);
  }
  const admission = [...o.admission].map(
    ([url, a]) => html`<tr><td><code>${queueNameOf(url)}</code></td><td class="n">${num(Math.round(a.backlog))}</td>
<td class="n">${num(a.drainPerSecond)}</td><td class="n">${num(a.highWaterMark === undefined ? undefined : Math.round(a.highWaterMark))}</td>
<td class="n">${num(a.turnsHeld)}</td>
<td>${a.highWaterMark === undefined ? html`<span class="muted">measuring: admitting all</span>` : a.backlog >= a.highWaterMark * 0.9 ? html`<span class="badge warn">refusing new requests</span>` : html`<span class="badge ok">admitting</span>`}</td></tr>`,
  );
  return {
    title: 'Overview',
    live: true,
    main: html`<h1>Queues</h1>
<table data-table="queues"><thead><tr><th>queue</th><th>role</th><th class="n">visible</th><th class="n">in flight</th><th class="n">delayed</th>
<th class="n">oldest</th><th class="n">sent / min</th><th>alarm</th></tr></thead>
<tbody>${stats.queues.map((q) => [row(q, false, o.slaSeconds, o.base), q.dlq === undefined ? '' : row(q.dlq, true, o.slaSeconds, o.base)])}</tbody></table>
<h2>Throughput over the last ${stats.windowMinutes} min (the workers' metrics)</h2>
<table data-table="throughput"><thead><tr><th>queue</th><th class="n">sent / min (SQS)</th><th class="n">finished / min (workers)</th></tr></thead>
<tbody>${stats.queues.map((q) => html`<tr><td><code>${q.name}</code></td><td class="n">${num(q.enqueuedPerMinute)}</td><td class="n">${num(dequeued.get(q.name) ?? 0)}</td></tr>`)}</tbody></table>
${
  admission.length === 0
    ? ''
    : html`<h2>Admission (this producer's view)</h2>
<table data-table="admission"><thead><tr><th>queue</th><th class="n">backlog</th><th class="n">drain / s</th><th class="n">high-water mark</th><th class="n">turns kept</th><th>state</th></tr></thead><tbody>${admission}</tbody></table>`
}
<p class="muted">Read at ${stats.at}. "Oldest" and "sent / min" come from AWS/SQS metrics where the server publishes them; "finished / min" from the workers' own metrics.</p>`,
  };
}
