/**
 * `npm run bench:lambda [-- --quick]`: sqs-jobs' Lambda handler (createLambdaHandler, the dedupe
 * lock on DynamoDB: DynamoLock) against AWS Lambda Powertools for TypeScript's pairing for SQS
 * (processPartialResponse + BatchProcessor, makeIdempotent + DynamoDBPersistenceLayer), the same
 * no-op job in both (jobs.ts), idempotency on both: each record costs conditional writes in both.
 * On run.sh's servers of its own (ElasticMQ, DynamoDB Local), both in this one process:
 *   1. CPU per record on the success path, rounds interleaved (cpu.ts), beside the floor under both
 *      (floor.ts: the same two writes a record, bare), and the DynamoDB and SQS calls each side's
 *      clients made per record (stack.ts counts them);
 *   2. the SQS and DynamoDB calls per record on the failure path (every job throws), on real
 *      messages (failure.ts);
 *   3. cold load: each handler bundled with esbuild as the SqsJobs construct bundles it, its size,
 *      and its import plus first invocation in fresh node processes (cold.ts).
 * Checked (exit 1 otherwise): every success record answered done, every failure record answered
 * failed, by both; each cold first invocation answered done. Prints the table (report.ts); writes
 * bench/lambda/results/latest.json. --quick: 6 rounds, 2 failure invocations, 3 processes a side.
 */
import { parseArgs } from 'node:util';
import { measureCold } from './cold.js';
import { measureCpu } from './cpu.js';
import { REGION } from './events.js';
import { measureFailures } from './failure.js';
import { report } from './report.js';
import { ENV } from './sqs-jobs-side.js';
import { buildStack } from './stack.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const QUICK = values.quick || process.env.BENCH_QUICK === '1';
const CPU = { warmUpRounds: QUICK ? 1 : 3, rounds: QUICK ? 6 : 30, invocations: 10, records: 10 };
const FAILURE = { invocations: QUICK ? 2 : 5, records: 10 };
const PROCESSES = QUICK ? 3 : 7;

const SQS = process.env.LAMBDA_SQS ?? 'http://127.0.0.1:9791';
const DYNAMODB = process.env.LAMBDA_DYNAMODB ?? 'http://127.0.0.1:4791';
for (const url of [SQS, DYNAMODB]) {
  if (!/^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url)) throw new Error(`loopback only: ${url}`);
  const port = Number(url.split(':').pop());
  if ([4566, 4567, 4569, 11211].includes(port)) throw new Error(`port ${port} belongs to the test stack: use another`);
}

const t0 = performance.now();
const say = (line: string) => console.error(`[bench:lambda] ${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s ${line}`);
const problems: string[] = [];
const problem = (line: string) => {
  problems.push(line);
  say(`PROBLEM: ${line}`);
};

const stack = await buildStack({ sqs: SQS, dynamodb: DYNAMODB, region: REGION });
say(`1. success path: ${CPU.warmUpRounds} warm-up + ${CPU.rounds} rounds × ${CPU.invocations} invocations × ${CPU.records} records a side`);
const cpu = await measureCpu(stack, CPU, say);
for (const side of ['sqsJobs', 'powertools'] as const)
  if (cpu[side].failed > 0) problem(`${side}: ${cpu[side].failed} no-op records answered failed on the success path`);

say(`2. failure path: ${FAILURE.invocations} invocations × ${FAILURE.records} failing records a side, on received messages`);
const failures = await measureFailures(stack, FAILURE);
for (const side of ['sqsJobs', 'powertools'] as const)
  if (failures[side].answeredFailed !== failures[side].records)
    problem(`${side}: ${failures[side].answeredFailed} of ${failures[side].records} failing records answered failed`);

say(`3. cold load: bundles, then ${PROCESSES} fresh node processes a side, alternating`);
const cold = await measureCold(
  {
    processes: PROCESSES,
    queueUrl: stack.queueUrl,
    env: {
      BENCH_LAMBDA_SQS: SQS,
      BENCH_LAMBDA_DYNAMODB: DYNAMODB,
      BENCH_LAMBDA_QUEUE_URL: stack.queueUrl,
      BENCH_LAMBDA_JOB_TABLE: stack.tables.sqsJobs,
      BENCH_LAMBDA_IDEMPOTENCY_TABLE: stack.tables.powertools,
      AWS_REGION: REGION,
      ...ENV,
    },
  },
  say,
);
for (const side of ['sqsJobs', 'powertools'] as const)
  for (const run of cold.runs[side]) if (run.failed > 0) problem(`${side}: a cold first invocation answered its record failed`);
await stack.close();

report({
  quick: QUICK,
  scale: { ...CPU, failure: FAILURE, processes: PROCESSES },
  cpu,
  failures,
  cold,
  problems,
});
if (problems.length > 0) {
  console.error(`\n[bench:lambda] FAILED: ${problems.length} problem${problems.length === 1 ? '' : 's'}:`);
  for (const p of problems) console.error(`  - ${p}`);
  process.exit(1);
}
say('done');
process.exit(0); // the SDK clients' sockets
