import type { Series } from '../../ops/series.js';
import type { Stats } from '../../ops/stats.js';
import { html } from '../html.js';
import { type Page, ms, num } from '../layout.js';
import { sparkline } from '../spark.js';

/** Per job type over the window: runs, outcomes, wait and process times (from the workers' metrics). */
export function jobTypesPage(stats: Stats, series: Series): Page {
  const rows = stats.jobs.map(
    (j) => html`<tr data-job="${j.job}"><td><code>${j.job}</code></td><td><code>${j.queue}</code></td>
<td class="n">${num(j.startedPerMinute)}</td>
<td>${sparkline(series.runs.get(`${j.job}|${j.queue}`) ?? [], { from: series.from, to: series.to, label: `${j.job} runs per minute`, gaps: 'zero' })}</td><td class="n">${num(j.counts.Succeeded)}</td><td class="n">${num(j.counts.Failed)}</td>
<td class="n">${num(j.counts.Retried)}</td><td class="n">${num(j.counts.DeadLettered)}</td><td class="n">${num(j.counts.DuplicatesSkipped)}</td>
<td class="n">${ms(j.waitMs.p50 ?? j.waitMs.average)}</td><td class="n">${ms(j.waitMs.p99)}</td>
<td class="n">${ms(j.processMs.p50 ?? j.processMs.average)}</td><td class="n">${ms(j.processMs.p99)}</td></tr>`,
  );
  return {
    title: 'Job types',
    live: true,
    main: html`<h1>Job types, last ${stats.windowMinutes} min</h1>
${
  rows.length === 0
    ? html`<p class="notice">No job has run in this window (or the workers publish no metrics here: their <code>metrics</code> option).</p>`
    : html`<table data-table="job-types"><thead><tr><th>job</th><th>queue</th><th class="n">runs / min</th><th>last hour</th><th class="n">succeeded</th>
<th class="n">failed</th><th class="n">retried</th><th class="n">dead-lettered</th><th class="n">duplicates</th>
<th class="n">wait p50</th><th class="n">wait p99</th><th class="n">process p50</th><th class="n">process p99</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
<p class="muted">From the workers' metrics (CloudWatch), read at ${stats.at}; p50 falls back to the mean where the server has no percentiles.</p>`,
  };
}
