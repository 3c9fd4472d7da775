/**
 * `npm run bench:pause [-- --quick]`: what pausing costs a worker while nothing is paused, and how
 * fast a pause and a resume reach a fleet, on servers of run.sh's own on loopback (ElasticMQ,
 * DynamoDB Local, memcached):
 *   1. CPU per message of a no-op job, `pauses` on against `pauses: false`, run at once (cpu.ts);
 *   2. a pause's and a resume's reach across 4 worker processes, p50/p99/max (reach.ts); beside
 *      it, the watch's cost in idle workers: memcached gets a second, store reads a minute, CPU (idle.ts).
 * Prints each part's table and a summary; writes bench/pause/results/latest.json.
 * --quick: 2 pairs of 2,000 messages, no warm-up; 5 + 1 reach rounds; a 15 s idle window.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { cpuPerMessage } from './cpu.js';
import { f, ms, spread } from './figures.js';
import { idleWatch } from './idle.js';
import { createDynamoClient, createJobTable, createPauses, ENV, PAUSE_POLL_MS, PAUSE_REREAD_MS, type Servers } from './parts.js';
import { reach, WORKERS } from './reach.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const QUICK = values.quick || process.env.BENCH_QUICK === '1';
// Full: 8,000 messages a worker and pair (20,000 would take the run well past 5 minutes on 2 cores).
const SCALE = QUICK
  ? { messages: 2_000, warm: 200, warmUpRun: 1_000, warmUpMs: [0, 0] as const, pairs: 2, jobRounds: 5, queueRounds: 1, idleS: 15 }
  : {
      messages: 8_000,
      warm: 800,
      warmUpRun: 2_000,
      warmUpMs: [15_000, 35_000] as const,
      pairs: 5,
      jobRounds: 20,
      queueRounds: 6,
      idleS: 60,
    };
/** Each pause holds 1.5-2.5 s (random: T0 and T1 fall anywhere in the workers' one-second watch), then 1.2 s for the resume. */
const REACH = { ratePerSecond: 100, holdMs: [1_500, 2_500] as const, afterMs: 1_200 };

const SQS = process.env.PAUSE_SQS ?? 'http://127.0.0.1:9734';
const DYNAMODB = process.env.PAUSE_DYNAMODB ?? 'http://127.0.0.1:4779';
const MEMCACHED = process.env.PAUSE_MEMCACHED ?? '127.0.0.1:11734';
for (const url of [SQS, DYNAMODB, `http://${MEMCACHED}`])
  if (!/^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url)) throw new Error(`loopback only: ${url}`);
if (Number(MEMCACHED.split(':')[1]) === 11211) throw new Error('memcached 11211 belongs to the test stack: use another');

const t0 = performance.now();
const say = (line: string) => console.error(`[bench:pause] ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s ${line}`);

/** A job store table and a key prefix of its own, its control item there at a version, holding no pause (a fleet that has paused before). */
async function fleet(name: string): Promise<Servers> {
  const id = randomUUID().slice(0, 8);
  const s = { sqs: SQS, dynamodb: DYNAMODB, memcached: MEMCACHED, table: `bench-pause-${name}-${id}`, prefix: `bench-pause-${id}:` };
  const dynamo = createDynamoClient({ endpoint: DYNAMODB, region: 'us-east-1' }, {}, ENV);
  await createJobTable(dynamo, s.table);
  dynamo.destroy();
  const pauses = createPauses({ store: { table: s.table, endpoint: DYNAMODB }, memcached: MEMCACHED, lockKeyPrefix: s.prefix }, ENV);
  await pauses.pause({ job: 'nothing' }, { by: 'bench:pause' });
  await pauses.resume({ job: 'nothing' });
  pauses.close();
  return s;
}
const [servers, idleServers] = await Promise.all([fleet('reach'), fleet('idle')]);

say(`1. CPU per message, pauses on and off at once: ${SCALE.pairs} pairs, ${f(SCALE.messages)} messages a worker (after ${f(SCALE.warm)})`);
const cpu = await cpuPerMessage({ ...servers, ...SCALE, say });
say(
  `2. reach: ${WORKERS} workers, ${REACH.ratePerSecond} jobs/s, ${SCALE.jobRounds} job and ${SCALE.queueRounds} queue pauses of ${REACH.holdMs.join('-')} ms; ` +
    `beside them, the watch of 4 idle workers (2 on, 2 off) for ${SCALE.idleS} s${QUICK ? '' : ', then after a change not told'}`,
);
const [r, idle] = await Promise.all([
  reach({ ...servers, ...REACH, jobRounds: SCALE.jobRounds, queueRounds: SCALE.queueRounds, say }),
  idleWatch({ ...idleServers, windowS: SCALE.idleS, untold: !QUICK }),
]);

const lo = Math.min(...cpu.ratios);
const hi = Math.max(...cpu.ratios);
const noise = lo <= 1 && hi >= 1 ? 'within noise' : hi < 1 ? 'lower in every pair' : 'higher in every pair';
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const range = (xs: readonly number[], d = 0) => `${f(Math.min(...xs), d)}-${f(Math.max(...xs), d)}`;
const list = (xs: readonly number[], d = 0) => xs.map((x) => f(x, d)).join(', ');
const rows = (title: string, lines: [string, string][]) => ['', `| ${title} | |`, '|---|---|', ...lines.map(([a, b]) => `| ${a} | ${b} |`)];
const load = `load average ${loadavg()[0]!.toFixed(1)} at the end`;
const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${load}${QUICK ? ' (--quick)' : ''}`;
const readsPerMinute = idle.reads.map((n) => (n / idle.windowS) * 60);
const out = [
  `bench:pause, ${new Date().toISOString().slice(0, 16).replace('T', ' ')}, ${machine}`,
  '',
  `| no-op job, on and off at once: ${SCALE.pairs} pairs, ${f(cpu.messages)} messages | CPU µs / message (median, range) | messages / s a worker (median) |`,
  '|---|---|---|',
  ...[true, false].map((on) => {
    const runs = cpu.runs.filter((x) => x.pauses === on);
    const what = on ? 'pauses on (watching, nothing paused)' : 'pauses off (`pauses: false`)';
    return `| ${what} | ${f(on ? cpu.on : cpu.off)} (${range(runs.map((x) => x.microsPerMessage))}) | ${f(spread(runs.map((x) => x.perSecond)).p50)} |`;
  }),
  `| on ÷ off, per pair | **${f(cpu.ratio, 2)}×** (${list(cpu.ratios, 2)}): ${noise} | |`,
  ...rows(`the watch of an idle worker, ${f(idle.windowS)} s`, [
    ['memcached gets / s, each worker with pauses on', `${list(idle.getsPerSecond, 2)} (one each ${PAUSE_POLL_MS} ms)`],
    [
      'job store reads, each worker with pauses on',
      `${list(idle.reads)} in ${f(idle.windowS)} s: ${list(readsPerMinute, 1)} a minute (one each ${PAUSE_REREAD_MS / 1000} s while nothing changes)`,
    ],
    ['gets and reads, workers with pauses off', f(idle.offCalls)],
    ['CPU ms / minute, each worker: on / off', `${list(idle.cpuOn)} / ${list(idle.cpuOff)}`],
    ...(idle.untoldReadsPerSecond === undefined
      ? []
      : ([['after a change not told (a pause made without memcached): store reads / s', list(idle.untoldReadsPerSecond, 2)]] as [
          string,
          string,
        ][])),
  ]),
  ...rows(`reach across ${WORKERS} workers, ${REACH.ratePerSecond} jobs/s: p50 / p99 / max over workers × rounds`, [
    [`job type paused (${SCALE.jobRounds} round${SCALE.jobRounds === 1 ? '' : 's'}): T0 → its last start`, ms(spread(r.job.lastStart))],
    ['job type paused: T0 → the first message it found paused', ms(spread(r.job.firstPaused.filter(Number.isFinite)))],
    ['job type resumed: T1 → its first start', ms(spread(r.job.resumeStart))],
    [
      `queue paused (${SCALE.queueRounds} round${SCALE.queueRounds === 1 ? '' : 's'}): T0 → the last receive it asked for`,
      ms(spread(r.queue.lastReceive)),
    ],
    ['queue paused: T0 → its last start', ms(spread(r.queue.lastStart))],
    ['queue resumed: T1 → its first receive', ms(spread(r.queue.resumeReceive))],
    ['queue resumed: T1 → its first start', ms(spread(r.queue.resumeStart))],
    ['pause() call (store, then memcached)', ms(spread(r.pauseCallMs))],
    ['resume() call', ms(spread(r.resumeCallMs))],
    ['starts after a worker found the job paused', f(r.startsAfterPaused)],
    ['resolution: mean gap between one worker’s starts', `${f(r.gapMs)} ms`],
  ]),
  '',
  '| summary | |',
  '|---|---|',
  `| CPU per message, pauses on ÷ off | ${f(cpu.ratio, 2)}× (pairs ${range(cpu.ratios, 2)}): ${noise} |`,
  `| idle watch, per worker | ${f(mean(idle.getsPerSecond), 2)} memcached gets / s; ${f(mean(readsPerMinute), 1)} store reads / min |`,
  `| a pause's reach (job type), p99 | ${f(spread(r.job.lastStart).p99)} ms (max ${f(spread(r.job.lastStart).max)}) |`,
  `| a resume's reach (job type), p99 | ${f(spread(r.job.resumeStart).p99)} ms (max ${f(spread(r.job.resumeStart).max)}) |`,
  `| a queue pause's reach (last receive), p99 | ${f(spread(r.queue.lastReceive).p99)} ms (max ${f(spread(r.queue.lastReceive).max)}) |`,
];
console.log(out.join('\n'));
if (r.untold > 0) say(`${r.untold} pauses could not be told through memcached`);
mkdirSync('bench/pause/results', { recursive: true });
writeFileSync(
  'bench/pause/results/latest.json',
  `${JSON.stringify({ at: new Date().toISOString(), machine, quick: QUICK, scale: SCALE, reach: REACH, cpu, idle, reachMs: r }, null, 2)}\n`,
);
say('done');
process.exit(0); // the SDK clients' sockets
