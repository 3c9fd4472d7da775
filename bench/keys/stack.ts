/**
 * What bench/keys runs on, in this one process, from src/ (tsx): a job store table and two queues
 * of its own on run.sh's servers; one producer per queue, on one counted DynamoDB client and one
 * counted SQS client (`producer`); and two workers with `schedules: true` on queue B, each on
 * counted clients of its own (`worker1`, `worker2`), sharing the memcached rota as a fleet does.
 * Queue A is never received from: the producer's scenarios leave their jobs there, so that a
 * singleton's holder stays `waiting`. The one job records each run (its job id, args, start).
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { z } from 'zod';
import { createDynamoClient, createSqsClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { defineJob } from '../../src/core/job.js';
import { createQueues } from '../../src/ops/wiring.js';
import { createProducer, type Producer } from '../../src/producer/producer.js';
import { createWorker, type Worker } from '../../src/worker/worker.js';
import { CallLog, type Who } from './counting.js';

/** Fake credentials: every server is local. */
export const ENV = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };

export interface Servers {
  readonly sqs: string;
  readonly dynamodb: string;
  /** host:port */
  readonly memcached: string;
}

export interface Run {
  readonly jobId: string;
  readonly key: string;
  readonly i: number;
  readonly startMs: number;
}

export interface Stack {
  readonly log: CallLog;
  readonly table: string;
  /** Producer on queue A (never received from) and on queue B (the workers'). */
  readonly a: Producer;
  readonly b: Producer;
  readonly job: ReturnType<typeof defineRefresh>;
  /** A store on an uncounted client: what the bench itself writes or reads (a holder's end). */
  readonly plainStore: DynamoJobStore;
  readonly runs: Run[];
  readonly workers: Worker[];
  close(): Promise<void>;
}

const defineRefresh = (runs: Run[]) =>
  defineJob({
    name: 'refresh',
    args: z.object({ key: z.string(), i: z.number() }),
    handle: (args, ctx) => void runs.push({ jobId: ctx.jobId, key: args.key, i: args.i, startMs: Date.now() }),
  });

export async function buildStack(s: Servers): Promise<Stack> {
  const id = randomUUID().slice(0, 8);
  const log = new CallLog();
  const at = (endpoint: string) => ({ endpoint, region: 'us-east-1' });
  const plainDynamo = createDynamoClient(at(s.dynamodb), {}, ENV);
  const plainSqs = createSqsClient(at(s.sqs), {}, ENV);
  const table = `bench-keys-${id}`;
  await createJobTable(plainDynamo, table);
  const [qa, qb] = await Promise.all(
    ['a', 'b'].map((q) => createQueues(plainSqs, { name: `bench-keys-${q}-${id}`, visibilityTimeout: 30 })),
  );
  plainSqs.destroy();
  const runs: Run[] = [];
  const job = defineRefresh(runs);
  const prefix = `bench-keys-${id}:`;
  const store = (who: Who) =>
    new DynamoJobStore({ client: log.dynamo(createDynamoClient(at(s.dynamodb), {}, ENV), who), table, ttlSeconds: 3_600 });
  const sqs = (who: Who) => new SqsQueuePort(log.sqs(createSqsClient(at(s.sqs), {}, ENV), who));

  const producerStore = store('producer');
  const producerSqs = sqs('producer');
  const producer = (queueUrl: string) =>
    createProducer(
      { queueUrl, jobs: [job], queue: producerSqs, store: producerStore, memcached: s.memcached, lockKeyPrefix: prefix, tracing: false },
      ENV,
    );
  const a = producer(qa!.queueUrl);
  const b = producer(qb!.queueUrl);
  const workers = (['worker1', 'worker2'] as const).map((who) =>
    createWorker(
      {
        queues: [qb!.queueUrl],
        jobs: [job],
        queue: sqs(who),
        store: store(who),
        schedules: true,
        memcached: s.memcached,
        lockKeyPrefix: prefix,
        concurrency: 10,
        handleSignals: false,
        tracing: false,
        metrics: { sink: 'off' },
        shutdownTimeoutMs: 5_000,
        logger: pino({ level: 'warn' }),
      },
      ENV,
    ),
  );
  await Promise.all(workers.map((w) => w.start()));
  const plainStore = new DynamoJobStore({ client: plainDynamo, table, ttlSeconds: 3_600 });
  return {
    log,
    table,
    a,
    b,
    job,
    plainStore,
    runs,
    workers,
    close: async () => {
      await Promise.all(workers.map((w) => w.stop().catch(() => {})));
      a.close();
      b.close();
      plainDynamo.destroy();
    },
  };
}
