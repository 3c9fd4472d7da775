/**
 * `npm run bench:admission [-- --quick]`: issue 19's admission benchmark on ElasticMQ, in one run.
 *   1. The drain-rate candidates (estimators.ts): accuracy, reaction to a halved drain, cost.
 *   2. Offered load 3x the workers' drain for ADMISSION_SECONDS (60; --quick 20), without
 *      admission, then with it (SLA 10 s; --quick 5 s); clients honour Retry-After. Then, with
 *      admission from the first second: 10x, and 3x with a capacity kept from before (an hour
 *      old, right), and kept stale (a day old, from a fleet twice this one).
 *   3. Tiers, with admission: a high and a low tier each offered 0.65x the capacity measured in 2
 *      (high alone fits, both do not), on one queue, then on the tiers' lanes picked strictly,
 *      then by weight.
 * Prints the goals beside the figures, writes bench/admission/results/latest.json and the chart
 * (docs/admission.svg and .png; ADMISSION_CHART to put it elsewhere).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { SQSClient } from '@aws-sdk/client-sqs';
import { renderAdmissionChart, type ChartRow } from './chart.js';
import { compareEstimators } from './estimators.js';
import { type PhaseResult, runPhase } from './load.js';

const quick = process.argv.includes('--quick');
const seconds = Number(process.env.ADMISSION_SECONDS ?? (quick ? 20 : 60));
const sla = quick ? 5 : 10;
// Slow handlers, so the drain is set by the handlers and not by this host's CPU (the load runs beside it).
const concurrency = 20;
const handlerMs = 1_000;
const emq = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9624';
const memcached = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11611';
const direct = new SQSClient({ endpoint: emq, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const resultsDir = 'bench/admission/results';
mkdirSync(resultsDir, { recursive: true });

console.error('drain-rate candidates: two workers, one stops halfway');
const estimators = await compareEstimators({
  emq,
  memcached,
  direct,
  seconds: quick ? 30 : 50,
  stepAt: quick ? 15 : 25,
  concurrency: concurrency / 2,
  handlerMs,
});

// The workers' real capacity: what they drain with work always waiting (the no-admission phase).
const nominal = (concurrency * 1000) / handlerMs;
const common = {
  emq,
  memcached,
  direct,
  seconds,
  concurrency,
  handlerMs,
  loads: [{ priority: 'normal', perSecond: 3 * nominal }] as const,
};
console.error(`without admission: ${seconds} s offered ${3 * nominal}/s`);
const without = await runPhase({ ...common, name: 'without', slaSeconds: undefined });
console.error(`with admission (SLA ${sla} s): ${seconds} s offered ${3 * nominal}/s`);
const withAdmission = await runPhase({ ...common, name: 'with', slaSeconds: sla });

/** From this second on, a phase is steady: the capacity measured and the backlog brought to the mark. */
const steadyFrom = Math.min(Math.floor(seconds / 2), 2 * sla + 5);
const steady = (r: PhaseResult) => r.seconds.filter((s) => s.t >= steadyFrom && s.t <= seconds);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(xs.length * 0.99) - 1)] ?? 0;
/** Jobs a second completed in the steady part of a phase. */
const rate = (r: PhaseResult) => r.completions.filter((t) => t >= steadyFrom && t <= seconds).length / (seconds - steadyFrom);
const capacity = rate(without);

// Admission from the first second: the same worker, fresh queues, as a fleet starting up.
console.error(`with admission at 10x: ${seconds} s offered ${10 * nominal}/s`);
const tenfold = await runPhase({ ...common, loads: [{ priority: 'normal', perSecond: 10 * nominal }], name: 'with10x', slaSeconds: sla });
console.error(`with admission at 3x, a capacity kept an hour ago (${capacity.toFixed(1)}/s, right)`);
const kept = await runPhase({ ...common, name: 'kept', slaSeconds: sla, kept: { perSecond: capacity, at: Date.now() - 3_600_000 } });
console.error(`with admission at 3x, a capacity kept a day ago by a fleet twice this one (${(2 * capacity).toFixed(1)}/s)`);
const stale = await runPhase({ ...common, name: 'stale', slaSeconds: sla, kept: { perSecond: 2 * capacity, at: Date.now() - 86_400_000 } });

// Tiers: loads set from the capacity just measured (a loaded host drains less than the nominal).
const tierShare = 0.65;
const tierLoads = [
  { priority: 'high', perSecond: tierShare * capacity },
  { priority: 'low', perSecond: tierShare * capacity },
] as const;
const tierPhases: PhaseResult[] = [];
for (const tiers of [undefined, 'strict', 'weighted'] as const) {
  console.error(`tiers (${tiers ?? 'one queue'}): high and low each offered ${(tierShare * capacity).toFixed(1)}/s, SLA ${sla} s`);
  tierPhases.push(await runPhase({ ...common, loads: tierLoads, name: tiers ?? 'onequeue', tiers, slaSeconds: sla }));
}
const mark = capacity * sla;
/** Jobs waiting to start: SQS's backlog (visible and delayed) and what the worker received and holds unstarted. */
const waitingOf = (s: PhaseResult['seconds'][number]) => s.backlog + s.held;
const figures = (r: PhaseResult) => {
  const st = steady(r);
  const waits = r.waits.filter((w) => w.t >= steadyFrom && w.t <= seconds).map((w) => w.ms / 1000);
  return {
    backlogMean: mean(st.map(waitingOf)),
    backlogMax: Math.max(...st.map(waitingOf)),
    sqsBacklogMean: mean(st.map((s) => s.backlog)),
    heldMean: mean(st.map((s) => s.held)),
    withinTenPercent: st.filter((s) => Math.abs(waitingOf(s) - mark) <= 0.1 * mark).length / Math.max(1, st.length),
    waitP99: p99(waits),
    waitP99Last10s: p99(r.waits.filter((w) => w.t > seconds - 10 && w.t <= seconds).map((w) => w.ms / 1000)),
    goodput: rate(r) / capacity,
    firstRetry: r.retried === 0 ? undefined : r.firstRetryAdmitted / r.retried,
    admissionMarkMean: mean(st.flatMap((s) => (s.mark === undefined ? [] : [s.mark]))),
    offered: r.offered,
    admitted: r.admitted,
    refusals: r.refusals,
    loopDelay: r.loopDelay,
  };
};
const f = { without: figures(without), with: figures(withAdmission) };

/** Over the whole phase, by when each job was accepted (its start less its wait): the first SLA window, and every job. */
const fromFirstSecond = (r: PhaseResult) => {
  const accepted = r.waits.map((w) => ({ at: w.t - w.ms / 1000, s: w.ms / 1000 })).filter((a) => a.at <= seconds);
  return {
    name: r.name,
    firstWindowP99: p99(accepted.filter((a) => a.at < sla).map((a) => a.s)),
    runP99: p99(accepted.map((a) => a.s)),
    goodputRun: r.completions.filter((t) => t <= seconds).length / (capacity * seconds),
    goodputFirstWindow: r.completions.filter((t) => t <= sla).length / (capacity * sla),
    maxRetryAfterSeconds: r.maxRetryAfterMs / 1000,
    refusals: r.refusals,
    admitted: r.admitted,
    offered: r.offered,
  };
};
const firstSecond = [withAdmission, tenfold, kept, stale].map(fromFirstSecond);
const steadySeconds = seconds - steadyFrom;
const tierFigures = tierPhases.map((r) => {
  const of = (p: 'high' | 'low') => {
    const waits = r.waits.filter((w) => w.priority === p && w.t >= steadyFrom && w.t <= seconds).map((w) => w.ms / 1000);
    return { waitP99: p99(waits), perSecond: waits.length / steadySeconds, refusals: r.refusalsBy[p] ?? 0 };
  };
  return { name: r.name, high: of('high'), low: of('low'), loopDelay: r.loopDelay };
});

const pct = (x: number | undefined) => (x === undefined ? '-' : `${(x * 100).toFixed(0)}%`);
const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ElasticMQ 1.7.1`;
const lines = [
  machine,
  `worker: concurrency ${concurrency}, handler ${handlerMs} ms; measured capacity ${capacity.toFixed(1)} jobs/s (nominal ${nominal}); offered ${3 * nominal}/s for ${seconds} s; SLA ${sla} s, high-water mark ${mark.toFixed(0)}; steady from ${steadyFrom} s`,
  '',
  'drain-rate candidates (halved at the step)      error before  error after  reaction  cost per sample',
  ...estimators.figures.map(
    (e) =>
      `  ${e.name.padEnd(46)} ${pct(e.errorBefore).padStart(12)} ${pct(e.errorAfter).padStart(12)} ${(e.reactionSeconds === undefined ? 'never' : `${e.reactionSeconds} s`).padStart(9)}  ${e.callsPerSample}`,
  ),
  '',
  'goal                                            without admission   with admission',
  `  waiting within 10% of the mark (steady s)    ${pct(f.without.withinTenPercent).padStart(17)} ${pct(f.with.withinTenPercent).padStart(16)}`,
  `  waiting mean / max (steady)                  ${`${f.without.backlogMean.toFixed(0)} / ${f.without.backlogMax}`.padStart(17)} ${`${f.with.backlogMean.toFixed(0)} / ${f.with.backlogMax}`.padStart(16)}`,
  `    of which SQS backlog / held by the worker  ${`${f.without.sqsBacklogMean.toFixed(0)} / ${f.without.heldMean.toFixed(0)}`.padStart(17)} ${`${f.with.sqsBacklogMean.toFixed(0)} / ${f.with.heldMean.toFixed(0)}`.padStart(16)}`,
  `  accepted jobs' wait p99 <= ${sla} s (steady)      ${`${f.without.waitP99.toFixed(1)} s`.padStart(17)} ${`${f.with.waitP99.toFixed(1)} s`.padStart(16)}`,
  `  wait p99, last 10 s                          ${`${f.without.waitP99Last10s.toFixed(1)} s`.padStart(17)} ${`${f.with.waitP99Last10s.toFixed(1)} s`.padStart(16)}`,
  `  goodput >= 95% of the drain rate             ${pct(f.without.goodput).padStart(17)} ${pct(f.with.goodput).padStart(16)}`,
  `  admitted on the first retry >= 80%           ${pct(f.without.firstRetry).padStart(17)} ${pct(f.with.firstRetry).padStart(16)}`,
  `  admission's own mark (mean, steady)          ${'-'.padStart(17)} ${f.with.admissionMarkMean.toFixed(0).padStart(16)}`,
  `  event-loop delay p99 / max (ms)              ${`${f.without.loopDelay.p99.toFixed(0)} / ${f.without.loopDelay.max.toFixed(0)}`.padStart(17)} ${`${f.with.loopDelay.p99.toFixed(0)} / ${f.with.loopDelay.max.toFixed(0)}`.padStart(16)}`,
  `  offered / admitted / refusals                ${`${f.without.offered} / ${f.without.admitted} / ${f.without.refusals}`.padStart(17)} ${`${f.with.offered} / ${f.with.admitted} / ${f.with.refusals}`.padStart(16)}`,
];
const firstRow = (label: string, cell: (t: (typeof firstSecond)[number]) => string) =>
  `  ${label.padEnd(44)}${firstSecond.map((t) => cell(t).padStart(14)).join('')}`;
lines.push(
  '',
  `admission from the first second: SLA ${sla} s, capacity ${capacity.toFixed(1)} jobs/s; jobs by when they were accepted`,
  `  ${''.padEnd(44)}${['3x', '10x', '3x, kept', '3x, stale'].map((n) => n.padStart(14)).join('')}`,
  firstRow(`accepted wait p99, first ${sla} s <= ${sla} s`, (t) => `${t.firstWindowP99.toFixed(1)} s`),
  firstRow(`accepted wait p99, whole run <= ${sla} s`, (t) => `${t.runP99.toFixed(1)} s`),
  firstRow('goodput, whole run >= 90%', (t) => pct(t.goodputRun)),
  firstRow(`goodput, first ${sla} s >= 50%`, (t) => pct(t.goodputFirstWindow)),
  firstRow('longest Retry-After told', (t) => `${t.maxRetryAfterSeconds} s`),
  firstRow('offered / admitted', (t) => `${t.offered} / ${t.admitted}`),
);
const tierRow = (label: string, cell: (t: (typeof tierFigures)[number]) => string) =>
  `  ${label.padEnd(38)}${tierFigures.map((t) => cell(t).padStart(14)).join('')}`;
lines.push(
  '',
  `tiers: high and low each offered ${(tierShare * capacity).toFixed(1)}/s (${tierShare}x the capacity), admission SLA ${sla} s; steady from ${steadyFrom} s`,
  `  ${''.padEnd(38)}${['one queue', 'strict', 'weighted'].map((n) => n.padStart(14)).join('')}`,
  tierRow('high wait p99 <= 1 s', (t) => `${t.high.waitP99.toFixed(2)} s`),
  tierRow('low wait p99', (t) => `${t.low.waitP99.toFixed(1)} s`),
  tierRow('jobs/s started, high / low', (t) => `${t.high.perSecond.toFixed(1)} / ${t.low.perSecond.toFixed(1)}`),
  tierRow('refusals, high / low', (t) => `${t.high.refusals} / ${t.low.refusals}`),
  tierRow('event-loop delay p99 / max (ms)', (t) => `${t.loopDelay.p99.toFixed(0)} / ${t.loopDelay.max.toFixed(0)}`),
);
console.log(`\n${lines.join('\n')}`);
writeFileSync(
  `${resultsDir}/latest.json`,
  `${JSON.stringify({ machine, seconds, sla, capacity, mark, steadyFrom, estimators, figures: f, firstSecond, tiers: tierFigures, without: without.seconds, with: withAdmission.seconds }, null, 2)}\n`,
);
const rows: ChartRow[] = [without, withAdmission].flatMap((r) =>
  r.seconds
    .filter((s) => s.t <= seconds + 10)
    .flatMap((s) => {
      const phase = r.name === 'with' ? 'with admission' : 'without admission';
      const out: ChartRow[] = [{ phase, t: s.t, measure: 'waiting to start (jobs)', value: waitingOf(s) }];
      if (s.wait !== undefined) out.push({ phase, t: s.t, measure: 'longest wait (s)', value: s.wait });
      return out;
    }),
);
const chart = process.env.ADMISSION_CHART ?? (quick ? `${resultsDir}/admission` : 'docs/admission');
await renderAdmissionChart(rows, { mark, sla }, chart);
console.log(`\nchart: ${chart}.svg, ${chart}.png; figures: ${resultsDir}/latest.json`);
direct.destroy();
