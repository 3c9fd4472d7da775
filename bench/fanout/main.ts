/**
 * `npm run bench:fanout [-- --quick]`: job status and fan-out on ElasticMQ, memcached and DynamoDB
 * Local (started by run.sh on their own ports), in one run:
 *   a. DynamoDB calls per tracked job (2,000 no-op jobs that succeed first time; target <= 3 writes)
 *      and per fan-out child (2,000 children; expected 1 TransactWriteItems + 1 GetItem);
 *   b. worker throughput with tracking on and off, alternating (5,000 no-op jobs each, one worker,
 *      concurrency 10, three of each; target on/off >= 0.90), after DynamoDB Local's warm-up;
 *   c. the chaos fan-out of bench/fanout/chaos.ts at 10,000 children (two worker processes, one
 *      SIGKILLed every 3 s, 5% of the children sent twice, 200-odd status reads), timed.
 * --quick: 500 / 1,000 x 2 / 2,000. Writes bench/fanout/results/latest.json; exits 1 when a check fails.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { randomUUID } from 'node:crypto';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { drainBodies, jobIdOf } from '../../test/faults/harness.js';
import { monotonic, runFanOutChaos } from './chaos.js';
import { childCost, trackedCost } from './cost.js';
import { closeStack, CREDENTIALS, DYNAMODB } from './stack.js';
import { median, type ThroughputRun, throughputRounds, throughputRun } from './throughput.js';
import { warmDynamoDb } from './warm-up.js';

const quick = process.argv.includes('--quick');
const scale = quick
  ? { tracked: 500, children: 500, throughputJobs: 1_000, rounds: 2, chaosChildren: 2_000 }
  : { tracked: 2_000, children: 2_000, throughputJobs: 5_000, rounds: 3, chaosChildren: 10_000 };
const startedAt = performance.now();
const dynamo = createDynamoClient({ endpoint: DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `bench-fanout-${randomUUID().slice(0, 8)}`;
await createJobTable(dynamo, table);
const store = { table, endpoint: DYNAMODB };
const f = (x: number, d = 2) => x.toFixed(d);

console.error(`a. store calls: ${scale.tracked} tracked jobs, then a fan-out of ${scale.children} children`);
const tracked = await trackedCost(DYNAMODB, table, scale.tracked);
const child = await childCost(DYNAMODB, table, scale.children, 1_000);

console.error(`b. throughput, tracking off / on, ${scale.rounds} rounds of ${scale.throughputJobs} jobs each`);
// Warm-up, not counted: DynamoDB Local's status writes until steady (warm-up.ts), then one run of each.
const warmUp = await warmDynamoDb(store, 3_000, quick ? 30_000 : 45_000, quick ? 60_000 : 120_000);
console.error(
  `  warm-up: ${warmUp.length} rounds of 3,000 jobs recorded as waiting then completed, straight to DynamoDB Local; the completions took ${warmUp.map((ms) => f(ms / 1000, 1)).join(', ')} s`,
);
await throughputRun('on', 300, store);
await throughputRun('off', 300, store);
const throughput = await throughputRounds(scale.rounds, scale.throughputJobs, store);

// The same with a handler that does something (20 ms): where the store's cost per job matters less.
const workJobs = quick ? 500 : 2_000;
console.error(`b'. throughput with a 20 ms handler, tracking off / on, ${workJobs} jobs each`);
const workRuns: ThroughputRun[] = [];
for (const mode of ['off', 'on', 'on', 'off'] as const) {
  const r = await throughputRun(mode, workJobs, store, 'work');
  workRuns.push(r);
  console.error(`  ${mode}: ${f(r.jobsPerSecond, 0)} jobs/s (${f(r.seconds, 1)} s)`);
}
const workOff = median(workRuns.filter((r) => r.mode === 'off').map((r) => r.jobsPerSecond));
const workOn = median(workRuns.filter((r) => r.mode === 'on').map((r) => r.jobsPerSecond));
const throughputWork = { runs: workRuns, offMedian: workOff, onMedian: workOn, ratio: workOn / workOff };

console.error(`c. chaos fan-out: ${scale.chaosChildren} children, 2 workers, one SIGKILLed every 3 s`);
const c = await runFanOutChaos({
  children: scale.chaosChildren,
  chunkSize: 20,
  killEveryMs: 3_000,
  dynamodb: DYNAMODB,
  readEveryMs: quick ? 150 : 650,
  maxReads: 400,
  deadlineMs: 900_000,
});
const dead = (await drainBodies(c.dlqUrl)).map((m) => jobIdOf(m.body));
const deadIds = new Set(dead);
const childRuns = [...c.childRuns.values()];
const reads = monotonic(c.reads);
const completion = c.completionRuns[0]?.args;
const chaos = {
  children: scale.chaosChildren,
  secondsToCompletion: c.completedAt === undefined ? null : (c.completedAt - c.enqueuedAt) / 1000,
  secondsToLastChild: c.lastChildAt === undefined ? null : (c.lastChildAt - c.enqueuedAt) / 1000,
  parentSendingSeconds: (() => {
    const end = c.parentRuns.map((p) => p.fannedAt).find((x) => x !== undefined);
    return end === undefined ? null : (end - c.enqueuedAt) / 1000;
  })(),
  completionRuns: c.completionRuns.length,
  completion,
  fanOut: c.final?.fanOut,
  parentState: c.final?.state,
  reads: { total: c.reads.length, ...reads, beforeEnd: c.reads.filter((r) => (r.ended ?? 0) < scale.chaosChildren).length },
  kills: c.kills,
  parentRuns: c.parentRuns,
  duplicatesSent: c.duplicatesSent,
  childrenRunTwice: childRuns.filter((n) => n > 1).length,
  childrenLost: childRuns.filter((n) => n === 0).length,
  deadLettered: { messages: dead.length, jobIds: deadIds.size, expected: c.expectedFailed },
  exitCodes: c.exitCodes,
};
dynamo.destroy();
closeStack();

const checks = {
  trackedWritesAtMost3: tracked.writesPerJob <= 3,
  // Children that end together share a transaction; a count that leaves the set incomplete reads nothing.
  childAtMostOneTransactionNoRead: child.transactWritesPerChild <= 1 && child.getItemsPerChild <= 0.01,
  throughputRatioAtLeast090: throughput.ratio >= 0.9,
  throughputWorkRatioAtLeast090: throughputWork.ratio >= 0.9,
  completionRanOnce: chaos.completionRuns === 1,
  allChildrenCounted:
    chaos.fanOut?.succeeded !== undefined &&
    chaos.fanOut.succeeded + chaos.fanOut.failed === scale.chaosChildren &&
    chaos.fanOut.completionSent &&
    completion?.total === scale.chaosChildren,
  noChildLost: chaos.childrenLost === 0,
  readsMonotonic: reads.backwards === 0,
  onlyFailingChildrenDeadLettered: deadIds.size === c.expectedFailed,
};
const passed = Object.values(checks).every(Boolean);
const tookSeconds = (performance.now() - startedAt) / 1000;
const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}${quick ? ' (--quick)' : ''}`;
mkdirSync('bench/fanout/results', { recursive: true });
writeFileSync(
  'bench/fanout/results/latest.json',
  `${JSON.stringify({ machine, quick, scale, tracked, child, warmUp, throughput, throughputWork, chaos, checks, passed, tookSeconds }, null, 2)}\n`,
);

const killedWhileSending = c.parentRuns.filter((p) => p.fannedAt === undefined);
console.log(`\n${machine}\n`);
console.log(`a. DynamoDB calls (wrapped DynamoDBClient.send: logical calls; SDK retries ${tracked.retries + child.retries})`);
console.log(
  `   tracked job (${tracked.jobs}, no-op, first time): ${f(tracked.writesPerJob)} writes/job (target <= 3), ${f(tracked.readsPerJob)} reads/job; producer ${JSON.stringify(tracked.producerPerJob)}, worker ${JSON.stringify(tracked.workerPerJob)}${Object.keys(tracked.failed).length ? `; failed ${JSON.stringify(tracked.failed)}` : ''}`,
);
console.log(
  `   fan-out child (${child.children}, chunkSize ${child.chunkSize}): ${f(child.transactWritesPerChild, 3)} TransactWriteItems + ${f(child.getItemsPerChild, 3)} GetItem per child; besides: ${JSON.stringify(child.otherCalls)}${Object.keys(child.failed).length ? `; failed ${JSON.stringify(child.failed)}` : ''}`,
);
console.log(
  `b. throughput, ${scale.throughputJobs} no-op jobs, one worker, concurrency 10 (median of ${scale.rounds}; after ${warmUp.length} warm-up rounds)`,
);
console.log(
  `   off ${f(throughput.offMedian, 0)} jobs/s, on ${f(throughput.onMedian, 0)} jobs/s: on/off ${f(throughput.ratio)} (target >= 0.90); per round ${throughput.pairRatios.map((x) => f(x)).join(', ')}`,
);
console.log(
  `   CPU per job: the worker ${f(throughput.cpu.workerOff, 0)} µs off, ${f(throughput.cpu.workerOn, 0)} µs on (on/off ${f(throughput.cpu.workerOn / throughput.cpu.workerOff)}); DynamoDB Local, on the same cores, ${f(throughput.cpu.storeOn, 0)} µs on`,
);
console.log(
  `b'. with a 20 ms handler, ${workJobs} jobs: off ${f(workOff, 0)} jobs/s, on ${f(workOn, 0)} jobs/s: on/off ${f(throughputWork.ratio)} (target >= 0.90)`,
);
console.log(`c. chaos fan-out, ${scale.chaosChildren} children, 2 workers, one SIGKILLed every 3 s (${chaos.kills} kills)`);
console.log(
  `   parent enqueued -> all children sent ${chaos.parentSendingSeconds === null ? '-' : f(chaos.parentSendingSeconds, 1)} s, -> last child ${chaos.secondsToLastChild === null ? '-' : f(chaos.secondsToLastChild, 1)} s, -> completion job ${chaos.secondsToCompletion === null ? '-' : f(chaos.secondsToCompletion, 1)} s`,
);
console.log(
  `   completion runs ${chaos.completionRuns} (must be 1), args ${JSON.stringify(completion && { total: completion.total, succeeded: completion.succeeded, failed: completion.failed })}; fanOut done ${chaos.fanOut ? chaos.fanOut.succeeded + chaos.fanOut.failed : '-'}/${chaos.fanOut?.total ?? '-'}, sent ${chaos.fanOut?.sent ?? '-'}, completionSent ${chaos.fanOut?.completionSent}`,
);
console.log(
  `   status reads ${chaos.reads.total} (${chaos.reads.beforeEnd} before the end, ${reads.unknown} unknown), backwards ${reads.backwards}`,
);
console.log(
  `   parent runs ${c.parentRuns.length}, killed while sending ${killedWhileSending.length}, resumed at cursors ${c.parentRuns
    .slice(1)
    .map((p) => p.cursor)
    .join(', ')}`,
);
console.log(
  `   children sent twice ${chaos.duplicatesSent}, children run twice ${chaos.childrenRunTwice}, lost ${chaos.childrenLost}; dead-lettered ${deadIds.size} job ids (${dead.length} messages), expected ${c.expectedFailed}`,
);
console.log(
  `\n${
    passed
      ? 'all checks passed'
      : `SOME CHECKS FAILED: ${Object.entries(checks)
          .filter(([, ok]) => !ok)
          .map(([k]) => k)
          .join(', ')}`
  }; took ${f(tookSeconds, 0)} s; bench/fanout/results/latest.json written`,
);
process.exit(passed ? 0 : 1);
