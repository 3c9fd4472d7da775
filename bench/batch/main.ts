/**
 * `npm run bench:batch [-- --quick]`: batch handlers on ElasticMQ (started by run.sh), in one run:
 *   1-2. 20,000 items over 50 keys: downstream calls per item, wall time and SQS calls per item of
 *        an sqs-jobs batch job against an sqs-jobs job per item and sqs-consumer handleMessageBatch;
 *   3.   a trickle: the age of the oldest item at flush against maxWaitMs + one poll wait;
 *   4.   5% of items failing once: no succeeded item runs twice, every item succeeds;
 *   5.   an SQS round trip as in AWS (20 ms added to every call): one long poll per queue against
 *        the default (up to 10, opened as receives come back full), per item and batched, per item
 *        with a deep prefetch, the batch job with the old default of 4, and sqs-consumer's ten
 *        Consumers (one call per key);
 *   6.   heap per held batch item (heap.ts).
 * --quick: 4,000 items, a 15 s trickle, 1,000 items failing once. Writes bench/batch/results/latest.json.
 * BATCH_CONTENDERS=batch,consumer-per-key: only those contenders of 1-2, and no 3-6.
 * BATCH_PROFILE=1: each contender of 1-2 profiled (V8, from its start until every item is done),
 * and where this process's CPU went per item printed by bucket (profiles in
 * bench/batch/results/profiles). Its wall, CPU and event-loop figures then include the profiler's cost.
 * Exits 1 when an assertion fails.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { failuresLines, runFailures } from './failures.js';
import { ROUND_TRIP_MS, roundTripLines, SQS_TARGET, throughputLines } from './report.js';
import { Stack } from './stack.js';
import { warmElasticMq } from './warm-up.js';
import { heapLines, runHeap } from './heap.js';
import { runStaleness, stalenessLines } from './staleness.js';
import { type ContenderResult, LABELS, runContender } from './throughput.js';
import { fmt } from './stats.js';
import { bucketTable, cpuBuckets } from '../lib/cpu-profile.js';

/** Where each profiled contender's CPU went, µs per item (V8 self time by bucket). */
function profileTable(results: readonly ContenderResult[]): string[] {
  const columns = results.flatMap((r) => (r.profile === undefined ? [] : [{ label: r.id, buckets: cpuBuckets(r.profile), per: r.items }]));
  return bucketTable('CPU µs / item by where it went (V8 profiler self time, start until every item is done)', columns);
}

const quick = process.argv.includes('--quick');
const scale = quick
  ? { items: 4_000, trickleSeconds: 15, failingItems: 1_000, roundTripItems: 2_000, heapItems: 2_000 }
  : { items: 20_000, trickleSeconds: 60, failingItems: 5_000, roundTripItems: 5_000, heapItems: 4_000 };
const startedAt = performance.now();
const stack = await Stack.open();

console.error(`1-2. ${scale.items} items over 50 keys, each contender in turn`);
const only = process.env.BATCH_CONTENDERS?.split(',');
const contenders = (['batch', 'batch-1r', 'batch-4r', 'per-item', 'consumer-per-key', 'consumer-whole-batch'] as const).filter(
  (id) => only === undefined || only.includes(id),
);
// Warm-up, not counted: ElasticMQ's JVM first (warm-up.ts: with only the two short runs below,
// ElasticMQ spent 2-4x the CPU in the first contender's run that it spent in later ones), then
// the SDK's, the proxy's and the contenders' own code.
const warmUp = await warmElasticMq(stack, 10_000, quick ? 15_000 : 40_000, quick ? 30_000 : 90_000);
console.error(`   ElasticMQ warmed up: ${warmUp.length} rounds of 10,000 messages, ${warmUp.map((ms) => fmt(ms / 1000, 1)).join(', ')} s`);
for (const id of ['batch', 'consumer-per-key'] as const) await runContender(stack, id, 1_000);
const profiles = process.env.BATCH_PROFILE === '1' ? 'bench/batch/results/profiles' : undefined;
if (profiles !== undefined) mkdirSync(profiles, { recursive: true });
const throughput: ContenderResult[] = [];
for (const id of contenders) {
  const r = await runContender(stack, id, scale.items, profiles);
  throughput.push(r);
  console.error(
    `  ${LABELS[id]}: ${fmt(r.wallMs / 1000, 1)} s, ${fmt(r.downstreamCallsPerItem, 4)} downstream calls/item, ${fmt(r.sqsCallsPerItem, 3)} SQS calls/item`,
  );
}
const profileLines = profiles === undefined ? [] : ['', ...profileTable(throughput)];
if (only !== undefined) {
  await stack.close();
  console.log([...throughputLines(throughput), ...profileLines].join('\n'));
  process.exit(0);
}
console.error(`3. trickle for ${scale.trickleSeconds} s`);
const staleness = await runStaleness(stack, scale.trickleSeconds);
console.error(`4. ${scale.failingItems} items, 5% failing once`);
const failures = await runFailures(stack, scale.failingItems);
console.error(`5. ${scale.roundTripItems} items, ${ROUND_TRIP_MS} ms added to every SQS call`);
stack.proxy.setPlan({ latencyRate: 1, latencyMs: ROUND_TRIP_MS });
const roundTrip: ContenderResult[] = [];
for (const id of ['per-item-1r', 'per-item', 'per-item-prefetch', 'batch-1r', 'batch-4r', 'batch', 'consumer-per-key'] as const)
  roundTrip.push(await runContender(stack, id, scale.roundTripItems));
stack.proxy.setPlan({});
console.error(`6. heap per held batch item, up to ${scale.heapItems} held`);
const heap = await runHeap(stack, scale.heapItems);
await stack.close();

const consumerVersion = (JSON.parse(readFileSync('node_modules/sqs-consumer/package.json', 'utf8')) as { version: string }).version;
const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ElasticMQ 1.7.1, sqs-consumer ${consumerVersion}${quick ? ' (--quick)' : ''}`;
const tookSeconds = (performance.now() - startedAt) / 1000;
const batch = throughput.find((r) => r.id === 'batch')!;
const passed = failures.ok && batch.sqsCallsPerItem <= SQS_TARGET && staleness.overBound === 0;

mkdirSync('bench/batch/results', { recursive: true });
writeFileSync(
  'bench/batch/results/latest.json',
  `${JSON.stringify({ machine, quick, scale, throughput, staleness, failures, roundTrip, heap, passed, tookSeconds }, null, 2)}\n`,
);
console.log(`\n${machine}\n`);
console.log([...throughputLines(throughput), ...profileLines].join('\n'));
console.log(`\n${stalenessLines(staleness).join('\n')}`);
console.log(`\n${failuresLines(failures).join('\n')}`);
console.log(`\n${roundTripLines(roundTrip).join('\n')}`);
console.log(`\n${heapLines(heap).join('\n')}`);
console.log(
  `\n${passed ? 'all checks passed' : 'SOME CHECKS FAILED'}; took ${fmt(tookSeconds, 0)} s; bench/batch/results/latest.json written`,
);
process.exit(passed ? 0 : 1);
