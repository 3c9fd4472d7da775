/**
 * `npm run bench:schedules`, part 1: two ways to run a job later than SQS's 900 s delay, in one run
 * on ElasticMQ and DynamoDB Local (run.sh starts them on their own ports), each with the same jobs:
 *   - store: sqs-jobs as built: the job kept in the job store and sent by a worker's tick with the
 *     delay left (maxSqsDelaySeconds lowered so the jobs here, due in 30-50 s, take that path);
 *   - hops: the message re-delayed in hops (here of HOP_S seconds, standing for 900): a consumer
 *     receives it, and while it is not due sends it again with the next hop's delay and deletes it.
 * Measured: lateness (handler start − the job's time), SQS and DynamoDB calls per job (counted on
 * the SDK clients), hops per job. Printed: those, and what each costs per delayed job per day at
 * AWS's list prices, scaled to real hops of 900 s.
 *
 *   tsx bench/schedules/run-at.ts [--quick] [--jobs N]
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
import { z } from 'zod';
import { createDynamoClient, createSqsClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { defineJob } from '../../src/core/job.js';
import { createQueues } from '../../src/ops/wiring.js';
import { createProducer } from '../../src/producer/producer.js';
import { createWorker } from '../../src/worker/worker.js';
import { CallTally } from '../events/counting.js';
import { countCalls as counted, PRICE, percentile } from './counted.js';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, jobs: { type: 'string' } } });
const JOBS = Math.max(10, Math.min(2_000, Number(values.jobs ?? (values.quick ? 60 : 200))));
/** The hop here; 900 s on AWS. */
const HOP_S = 5;
const REAL_HOP_S = 900;
const FIRST_DUE_S = 30;
const SPREAD_S = 20;
const SQS = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9624';
const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4769';
for (const url of [SQS, DYNAMODB]) if (!/^http:\/\/(127\.0\.0\.1|localhost):\d+$/.test(url)) throw new Error(`loopback only: ${url}`);
const ENV = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };

const dues = (t0: number) => Array.from({ length: JOBS }, (_, i) => t0 + (FIRST_DUE_S + (i * SPREAD_S) / JOBS) * 1000);

async function queuesFor(sqs: SQSClient, name: string) {
  const made = await createQueues(sqs, { name: `${name}-${randomUUID().slice(0, 6)}` });
  return made.queueUrl;
}

/** sqs-jobs as built: kept in the job store, sent by the worker's tick with the delay left. */
async function storePath(t0: number) {
  const sqsCalls = new CallTally();
  const dynamoCalls = new CallTally();
  const sqs = counted(createSqsClient({ endpoint: SQS, region: 'us-east-1' }, {}, ENV), sqsCalls);
  const dynamo = counted(createDynamoClient({ endpoint: DYNAMODB, region: 'us-east-1' }, {}, ENV), dynamoCalls);
  const table = `bench-run-at-${randomUUID().slice(0, 8)}`;
  await createJobTable(dynamo, table);
  const queueUrl = await queuesFor(sqs, 'run-at-store');
  const store = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
  const port = new SqsQueuePort(sqs);
  const started = new Map<string, number>();
  const job = defineJob({ name: 'later', args: z.object({ i: z.number() }), handle: (_a, ctx) => void started.set(ctx.jobId, Date.now()) });
  const producer = createProducer({ queueUrl, jobs: [job], queue: port, store, maxSqsDelaySeconds: 10, tracing: false }, ENV);
  const worker = createWorker(
    {
      queues: [queueUrl],
      jobs: [job],
      queue: port,
      store,
      schedules: true,
      waitTimeSeconds: 2,
      handleSignals: false,
      tracing: false,
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
    },
    ENV,
  );
  await worker.start();
  sqsCalls.reset();
  dynamoCalls.reset();
  const due = dues(t0);
  const ids = await Promise.all(due.map(async (at, i) => (await producer.enqueue(job, { i }, { runAt: new Date(at) })).jobId));
  const deadline = t0 + (FIRST_DUE_S + SPREAD_S + 30) * 1000;
  while (started.size < JOBS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  const windowS = (Date.now() - t0) / 1000;
  await worker.stop();
  producer.close();
  store.close();
  sqs.destroy();
  const lateness = ids.flatMap((id, i) => (started.has(id) ? [started.get(id)! - due[i]!] : []));
  return { started: started.size, lateness, sqs: sqsCalls.snapshot(), dynamo: dynamoCalls.snapshot(), windowS };
}

/** The message re-delayed in hops: received, and while not due, sent again with the next hop and deleted. */
async function hopsPath(t0: number) {
  const calls = new CallTally();
  const sqs = counted(createSqsClient({ endpoint: SQS, region: 'us-east-1' }, {}, ENV), calls);
  const queueUrl = await queuesFor(sqs, 'run-at-hops');
  const hopOf = (dueMs: number) => Math.max(0, Math.min(HOP_S, Math.ceil((dueMs - Date.now()) / 1000)));
  const send = (body: string, dueMs: number) =>
    sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        DelaySeconds: hopOf(dueMs),
        MessageAttributes: { due: { DataType: 'Number', StringValue: String(dueMs) } },
      }),
    );
  calls.reset();
  const due = dues(t0);
  await Promise.all(due.map((at, i) => send(String(i), at)));
  const started = new Map<number, number>();
  let hops = 0;
  const deadline = t0 + (FIRST_DUE_S + SPREAD_S + 30) * 1000;
  const consume = async () => {
    while (started.size < JOBS && Date.now() < deadline) {
      const got = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: ['due'] }),
      );
      await Promise.all(
        (got.Messages ?? []).map(async (m) => {
          const dueMs = Number(m.MessageAttributes?.due?.StringValue);
          // Not due within a second: one more hop. Within it: started at its time, never before.
          if (dueMs - Date.now() >= 1_000) {
            hops++;
            await send(m.Body!, dueMs);
          } else {
            await new Promise((r) => setTimeout(r, Math.max(0, dueMs - Date.now())));
            started.set(Number(m.Body), Date.now());
          }
          await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
        }),
      );
    }
  };
  await Promise.all([consume(), consume()]);
  const windowS = (Date.now() - t0) / 1000;
  sqs.destroy();
  const lateness = due.flatMap((at, i) => (started.has(i) ? [started.get(i)! - at] : []));
  return { started: started.size, lateness, sqs: calls.snapshot(), hops, windowS };
}

const t0 = Date.now() + 2_000;
console.error(
  `[bench:schedules] run-at: ${JOBS} jobs per path, due ${FIRST_DUE_S}-${FIRST_DUE_S + SPREAD_S} s from now; hops of ${HOP_S} s`,
);
const [store, hops] = await Promise.all([storePath(t0), hopsPath(t0)]);

const sum = (o: Record<string, number>, ops: readonly string[]) => ops.reduce((n, op) => n + (o[op] ?? 0), 0);
const f = (x: number, d = 2) => x.toFixed(d);
// Per job. The worker's own receive and delete of a job are the same on both paths and left out; what each way adds is counted.
const hopsPerJob = hops.hops / JOBS;
// A hop is a send, a delete and its share of the receives (every delivery, a hop's or the last one's, is received alike).
const hopShare = hops.hops / Math.max(1, hops.hops + JOBS);
const hopCalls = (hops.sqs.SendMessage ?? 0) - JOBS + ((hops.sqs.DeleteMessage ?? 0) - JOBS) + (hops.sqs.ReceiveMessage ?? 0) * hopShare;
const sqsPerHop = hopCalls / Math.max(1, hops.hops);
const storeWrites = sum(store.dynamo, ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchExecuteStatement', 'TransactWriteItems']) / JOBS;
// Write units, with the due index's: a put writes the index once, a claim moves the item in it (two
// index writes: out and in), a delete takes it out once.
const storeWriteUnits = ((store.dynamo.PutItem ?? 0) * 2 + (store.dynamo.UpdateItem ?? 0) * 3 + (store.dynamo.DeleteItem ?? 0) * 2) / JOBS;
const storeQueries = (store.dynamo.Query ?? 0) / (store.windowS / 60);
const storeSends = (store.sqs.SendMessage ?? 0) / JOBS;
const storeCostPerJob = storeWriteUnits * PRICE.write + storeSends * PRICE.sqsRequest;
const hopCostPerJobDay = (86_400 / REAL_HOP_S) * sqsPerHop * PRICE.sqsRequest;
const perMillion = (dollars: number) => `$${f(dollars * 1e6)}`;
const lines = [
  '',
  '| | store (sqs-jobs) | hops |',
  '|---|---|---|',
  `| jobs run | ${store.started} of ${JOBS} | ${hops.started} of ${JOBS} |`,
  `| lateness p50 / p99 / max (ms) | ${f(percentile(store.lateness, 50), 0)} / ${f(percentile(store.lateness, 99), 0)} / ${f(Math.max(...store.lateness), 0)} | ${f(percentile(hops.lateness, 50), 0)} / ${f(percentile(hops.lateness, 99), 0)} / ${f(Math.max(...hops.lateness), 0)} |`,
  `| per job, to put it off | ${f(storeWrites)} DynamoDB writes (${f(storeWriteUnits)} write units with the index), ${f(storeSends)} SQS sends | ${f(hopsPerJob)} hops of ${HOP_S} s, ${f(sqsPerHop)} SQS calls a hop |`,
  `| idle cost | ${f(storeQueries)} index queries a minute, fleet-wide | none |`,
  `| per million jobs put off 1 h | ${perMillion(storeCostPerJob)} | ${perMillion(hopCostPerJobDay / 24)} |`,
  `| per million jobs put off 1 day | ${perMillion(storeCostPerJob)} | ${perMillion(hopCostPerJobDay)} |`,
  `| per million jobs put off 30 days | ${perMillion(storeCostPerJob)} | ${perMillion(hopCostPerJobDay * 30)} |`,
  `| hops ÷ store, 1 day | ${f(hopCostPerJobDay / storeCostPerJob, 1)}× | |`,
];
console.log(lines.join('\n'));
const result = {
  at: new Date().toISOString(),
  jobs: JOBS,
  hopSeconds: HOP_S,
  store,
  hops,
  prices: PRICE,
  storeCostPerJob,
  hopCostPerJobDay,
};
mkdirSync('bench/schedules/results', { recursive: true });
writeFileSync('bench/schedules/results/run-at.json', `${JSON.stringify(result, null, 2)}\n`);
