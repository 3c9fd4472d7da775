/**
 * `npm run bench:fairness`: the six scenarios of issue 12 on ElasticMQ, each run in every mode in
 * turn (fairness off first), two worker processes of concurrency 10, handler 20 ms. Prints the
 * goals beside the figures, writes bench/fairness/results/latest.json and the wait chart.
 *   FAIRNESS_SCALE      quick (0.1, a smoke run) | full (default) | a number in (0, 1]
 *   FAIRNESS_MODES      comma-separated, default off,on (see modes.ts for the others)
 *   FAIRNESS_SCENARIOS  comma-separated ids, default all (baseline is added when noisy, noisy-3p or two-noisy run)
 *   FAIRNESS_ROUNDS     how many times each scenario alternates through the modes (default 1; the table shows medians)
 *   FAIRNESS_CHART      where the chart goes, without extension (default docs/fairness-wait)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsProxy } from '../lib/sqs-proxy.js';
import { renderWaitChart, type ChartPoint } from './chart.js';
import { MODES, type Mode } from './modes.js';
import { table } from './report.js';
import { runOne, type RunResult } from './run-one.js';
import { parseScale, scenarios } from './scenarios.js';

const scale = parseScale(process.env.FAIRNESS_SCALE);
const modes = (process.env.FAIRNESS_MODES ?? 'off,on').split(',').map((m) => m.trim()) as Mode[];
for (const m of modes) if (!MODES.includes(m)) throw new Error(`unknown mode "${m}"; modes: ${MODES.join(', ')}`);
if (modes[0] !== 'off') modes.unshift('off');
const wanted = new Set(
  (
    process.env.FAIRNESS_SCENARIOS ??
    scenarios(scale)
      .map((s) => s.id)
      .join(',')
  ).split(','),
);
if (wanted.has('noisy') || wanted.has('noisy-3p') || wanted.has('two-noisy')) wanted.add('baseline');
const rounds = Math.max(1, Number(process.env.FAIRNESS_ROUNDS ?? 1));
const emq = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9324';
const memcached = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211';
const resultsDir = 'bench/fairness/results';
mkdirSync(resultsDir, { recursive: true });

const direct = new SQSClient({ endpoint: emq, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const proxies = { worker: await SqsProxy.start(emq), producer: await SqsProxy.start(emq), sorter: await SqsProxy.start(emq) };
const ctx = { emq, memcached, direct, proxies, scale, resultsDir };

const results: RunResult[] = [];
const unavailable = new Set<Mode>();
for (const scenario of scenarios(scale).filter((s) => wanted.has(s.id))) {
  console.error(scenario.title);
  for (let round = 0; round < rounds; round++)
    for (const mode of modes) {
      if (unavailable.has(mode)) {
        results.push({ scenario: scenario.id, mode, status: 'unavailable' });
        continue;
      }
      const r = await runOne(ctx, scenario, mode);
      results.push(r);
      if (r.status === 'unavailable') {
        unavailable.add(mode);
        console.error(`  ${mode.padEnd(10)} not available: ${r.note}`);
        continue;
      }
      const f = r.figures!;
      const quiet = f.quiet ? `, quiet p99 ${(f.quiet.p99 / 1000).toFixed(2)} s` : '';
      const burst = r.fillMs && scenario.bursts.length > 0 ? `, bursts sent in ${(r.fillMs / 1000).toFixed(1)} s first` : '';
      console.error(
        `  ${mode.padEnd(10)} ${r.status}: ${f.jobs} jobs, ${f.throughput.toFixed(0)}/s${quiet}${burst}, ${r.calls!.worker.toFixed(3)} worker calls/job`,
      );
    }
}

const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ElasticMQ 1.7.1, scale ${scale}`;
writeFileSync(`${resultsDir}/latest.json`, `${JSON.stringify({ machine, scale, modes, results }, null, 2)}\n`);
console.log(`\n${machine}\n`);
console.log(table(results, modes));

const chartModes = modes.filter((m) => results.some((r) => r.scenario === 'noisy' && r.mode === m && r.series));
if (chartModes.length > 0) {
  const lastRound = modes.map((m) => results.filter((r) => r.scenario === 'noisy' && r.mode === m && r.series).at(-1)!).filter(Boolean);
  const points: ChartPoint[] = lastRound.flatMap((r) => r.series!.map((p) => ({ mode: r.mode, ...p })));
  const base = process.env.FAIRNESS_CHART ?? 'docs/fairness-wait';
  await renderWaitChart(
    points,
    chartModes,
    `Noisy burst (A: ${Math.round(20_000 * scale)} jobs) + 10 quiet tenants: wait per tenant`,
    base,
  );
  console.log(`\nchart: ${base}.svg, ${base}.png`);
}

for (const p of Object.values(proxies)) await p.close();
direct.destroy();
process.exit(0);
