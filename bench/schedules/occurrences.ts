/**
 * `npm run bench:schedules`, part 2: the schedules' own figures, and BullMQ's job schedulers beside
 * them, in one run (run.sh starts ElasticMQ, DynamoDB Local, a memcached and a redis-server of its
 * own, on loopback):
 *   - load (load.ts): sqs-jobs schedules firing about 1,000 and then 10,000 occurrences a minute
 *     (1,000 schedules every 60 s, then every 6 s) for a window, fired and run by two workers with
 *     `schedules: true`. Measured: lateness (handler start − the occurrence's time) p50/p99, and
 *     the SQS and DynamoDB calls and DynamoDB capacity units per occurrence, counted on the SDK
 *     clients; priced at AWS's list prices per million occurrences.
 *   - crash loop (crash.ts), both systems in turn: an every-1s schedule, three worker processes,
 *     one SIGKILLed every 3 s and started again. Counted per occurrence: duplicates, missed, and
 *     reruns of a killed run (at-least-once, counted apart); lateness of each occurrence's first run.
 * Prints both tables, with BullMQ ÷ sqs-jobs ratios, and writes bench/schedules/results/occurrences.json.
 *
 *   tsx bench/schedules/occurrences.ts [--quick]   (--quick: 20 s windows instead of 60 s)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type CrashFigures, crashLoop, LEASE_S } from './crash.js';
import { PRICE } from './counted.js';
import { type LoadFigures, runLoad } from './load.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } }, strict: false }); // run-at.ts's --jobs passes by
const WINDOW_S = values.quick ? 20 : 60;
const KILL_EVERY_MS = 3_000;
const SQS = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9624';
const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4769';
const MEMCACHED = process.env.SCHEDULES_MEMCACHED ?? '127.0.0.1:11724';
const REDIS_PORT = Number(process.env.SCHEDULES_REDIS_PORT ?? 6624);
for (const url of [SQS, DYNAMODB, `http://${MEMCACHED}`])
  if (!/^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url)) throw new Error(`loopback only: ${url}`);
for (const port of [REDIS_PORT, Number(MEMCACHED.split(':')[1])])
  if ([4566, 4569, 11211].includes(port)) throw new Error(`port ${port} belongs to the test stack: use another`);

const say = (s: string) => console.error(`[bench:schedules] ${s}`);
const servers = { sqs: SQS, dynamodb: DYNAMODB, memcached: MEMCACHED };

const loads: LoadFigures[] = [];
for (const periodS of [60, 6]) {
  say(`load: 1,000 schedules every ${periodS} s (${(60_000 / periodS).toLocaleString('en')} occurrences a minute) for ${WINDOW_S} s`);
  loads.push(await runLoad({ ...servers, schedules: 1_000, periodS, windowS: WINDOW_S }));
}
const crashes: CrashFigures[] = [];
for (const system of ['sqs-jobs', 'bullmq'] as const) {
  say(`crash loop: ${system}, every 1 s, 3 workers, one SIGKILLed every ${KILL_EVERY_MS / 1000} s, for ${WINDOW_S} s`);
  crashes.push(await crashLoop({ ...servers, system, windowS: WINDOW_S, killEveryMs: KILL_EVERY_MS, redisPort: REDIS_PORT }));
}

const f = (x: number, d = 2) => x.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d });
const total = (o: Record<string, number>) => Object.values(o).reduce((n, c) => n + c, 0);
const perOcc = (l: LoadFigures, o: Record<string, number>) =>
  `${f(total(o) / l.ran)} (${Object.entries(o)
    .map(([op, n]) => `${op} ${f(n / l.ran)}`)
    .join(', ')})`;
const costPerOcc = (l: LoadFigures) =>
  (l.units.write * PRICE.write + l.units.read * PRICE.read + total(l.sqs) * PRICE.sqsRequest) / Math.max(1, l.ran);
const row = (label: string, cell: (l: LoadFigures) => string) => `| ${label} | ${loads.map(cell).join(' | ')} |`;
const loadTable = [
  '',
  `| sqs-jobs schedules, ${WINDOW_S} s, 2 workers | ${loads.map((l) => `${f(l.perMinute, 0)} a minute`).join(' | ')} |`,
  `|---|${loads.map(() => '---').join('|')}|`,
  row('schedules × every', (l) => `${f(l.schedules, 0)} × ${l.periodS} s`),
  row('occurrences run', (l) => `${f(l.ran, 0)} of ${f(l.expected, 0)} (${l.skipped} skipped, ${l.startedTwice} started twice)`),
  row('lateness p50 / p99 / max (ms)', (l) => `${f(l.latenessMs.p50, 0)} / ${f(l.latenessMs.p99, 0)} / ${f(l.latenessMs.max, 0)}`),
  row('DynamoDB calls per occurrence', (l) => perOcc(l, l.dynamo)),
  row('DynamoDB units per occurrence', (l) => `${f(l.units.write / l.ran)} write, ${f(l.units.read / l.ran)} read`),
  row('SQS calls per occurrence', (l) => perOcc(l, l.sqs)),
  row('per million occurrences', (l) => `$${f(costPerOcc(l) * 1e6)}`),
  row("DynamoDB Local's mean answer", (l) => `${f(l.dynamoMeanMs, 1)} ms`),
];
const [ours, peer] = [crashes.find((c) => c.system === 'sqs-jobs')!, crashes.find((c) => c.system === 'bullmq')!];
const ratio = (a: number, b: number) => (a === 0 && b === 0 ? '=' : b === 0 ? '∞' : `${Number((a / b).toPrecision(2))}×`);
const crow = (label: string, pick: (c: CrashFigures) => number, d = 0) =>
  `| ${label} | ${f(pick(ours), d)} | ${f(pick(peer), d)} | ${ratio(pick(peer), pick(ours))} |`;
const crashTable = [
  '',
  `| every 1 s, 3 workers, a SIGKILL every ${KILL_EVERY_MS / 1000} s, ${WINDOW_S} s, leases of ${LEASE_S} s | sqs-jobs | BullMQ | BullMQ ÷ sqs-jobs |`,
  '|---|---|---|---|',
  crow('occurrences', (c) => c.occurrences),
  crow('kills', (c) => c.kills),
  crow('run once', (c) => c.ranOnce),
  crow('duplicates (run again, none of its runs killed)', (c) => c.duplicates),
  crow('missed (never run to its end)', (c) => c.missed),
  crow('reruns after a kill (at-least-once)', (c) => c.reruns),
  crow('lateness p50 (ms)', (c) => c.latenessMs.p50),
  crow('lateness p99 (ms)', (c) => c.latenessMs.p99),
  crow('runs outside the window', (c) => c.strays),
];
console.log([...loadTable, ...crashTable].join('\n'));
for (const c of crashes) {
  if (c.duplicateIds.length > 0) say(`${c.system}: duplicates: ${c.duplicateIds.join(', ')}`);
  if (c.missedIds.length > 0) say(`${c.system}: missed occurrences (epoch s): ${c.missedIds.join(', ')}`);
}
const result = {
  at: new Date().toISOString(),
  node: process.version,
  windowS: WINDOW_S,
  prices: PRICE,
  load: loads.map((l) => ({ ...l, costPerMillion: costPerOcc(l) * 1e6 })),
  crash: { killEveryMs: KILL_EVERY_MS, leaseS: LEASE_S, systems: crashes },
};
mkdirSync('bench/schedules/results', { recursive: true });
writeFileSync('bench/schedules/results/occurrences.json', `${JSON.stringify(result, null, 2)}\n`);
