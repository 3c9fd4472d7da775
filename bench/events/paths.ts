/**
 * The two paths under test, each with its own 4 queues, its own 4 workers and its own counted
 * clients, set up alike (same queue settings, same worker options):
 *   sns     one producer.publish(event) → SNS topic → 4 subscriber queues (provisionEvents: raw
 *           delivery, no filter policy) → 4 jobs defined with `on: event`;
 *   direct  4 producer.enqueue() calls at once (Promise.all), one per queue, by 4 producers sharing
 *           one SQS client → 4 plain jobs. (enqueueMany sends one job to one queue: it cannot
 *           reach 4 queues in one call, so 4 parallel enqueues are the direct path's best.)
 */
import { randomUUID } from 'node:crypto';
import { DeleteTopicCommand } from '@aws-sdk/client-sns';
import { DeleteQueueCommand } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
import { z } from 'zod';
import { createSqsClient } from '../../src/adapters/aws-clients.js';
import { createSnsClient, SnsTopics } from '../../src/adapters/sns-topics.js';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import type { AnyJob } from '../../src/core/job.js';
import { createProducer, createWorker, defineEvent, defineJob, type Worker } from '../../src/index.js';
import { provisionEvents } from '../../src/ops/events.js';
import { provisionQueues } from '../../src/ops/queues.js';
import { CallTally, countSns, countSqs } from './counting.js';
import type { Timeline } from './timeline.js';

export const JOBS = ['reserve-stock', 'send-email', 'update-crm', 'analytics'] as const;

/** Explicit, so a developer's SQS_JOBS_MEMCACHED, SQS_JOBS_JOB_TABLE or SQS_JOBS_METRICS never leak in. */
export function benchEnv(endpoint: string) {
  return { AWS_ENDPOINT_URL: endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
}

/** The worker options both paths use: sqs-jobs' defaults for production (20 s long polls), no dedupe lock, metrics off. */
export const WORKER = { concurrency: 10, waitTimeSeconds: 20, visibilityTimeoutSeconds: 30, deleteFlushMs: 50, receiveConcurrency: 1 };
const QUEUE = { visibilityTimeout: 30, maxReceiveCount: 5 };

export interface Path {
  readonly name: 'sns' | 'direct';
  readonly timeline: Timeline;
  /** Calls by the producer (SNS, SQS) and by the path's 4 workers (SQS). */
  readonly calls: { readonly producerSns: CallTally; readonly producerSqs: CallTally; readonly workerSqs: CallTally };
  /** Send event `seq`: one publish, or 4 enqueues. */
  send(seq: number): Promise<void>;
  close(): Promise<void>;
}

const payload = z.object({ orderId: z.string(), seq: z.number().int() });
type Payload = z.infer<typeof payload>;

interface Stack {
  readonly endpoint: string;
  readonly tag: string;
}

export function newStack(endpoint: string): Stack {
  return { endpoint, tag: randomUUID().slice(0, 8) };
}

/** One worker per queue, each running that queue's job; answers a function that stops them all and releases their clients. */
async function startWorkers(
  stack: Stack,
  queueUrls: readonly string[],
  jobs: readonly AnyJob[],
  tally: CallTally,
): Promise<() => Promise<void>> {
  const env = benchEnv(stack.endpoint);
  const aws = { endpoint: stack.endpoint, region: 'us-east-1' };
  const clients: { destroy(): void }[] = [];
  const workers: Worker[] = jobs.map((job, i) => {
    // As the worker wires itself: long polls and control calls (deletes, heartbeats) on their own clients.
    const poll = countSqs(createSqsClient(aws, { maxSockets: 2, requestTimeoutMs: (WORKER.waitTimeSeconds + 10) * 1000 }, env), tally);
    const control = countSqs(createSqsClient(aws, { maxSockets: 50, requestTimeoutMs: 10_000 }, env), tally);
    clients.push(poll, control);
    const worker = createWorker(
      {
        ...WORKER,
        queues: [queueUrls[i] ?? ''],
        jobs: [job],
        queue: new SqsQueuePort(poll, control),
        shutdownTimeoutMs: 2_000,
        handleSignals: false,
        logger: pino({ level: 'silent' }),
        metrics: { sink: 'off' },
        ...aws,
      },
      env,
    );
    worker.on('error', (e) => console.error(`  worker error (${job.name}): ${e.message}`));
    worker.on('job:dead-lettered', (e) => console.error(`  dead-lettered (${e.jobName}): ${e.reason}`));
    return worker;
  });
  await Promise.all(workers.map((w) => w.start()));
  return async () => {
    await Promise.all(workers.map((w) => w.stop()));
    for (const c of clients) c.destroy();
  };
}

/** The SNS path: an event, its topic, 4 subscriber jobs and their queues (provisionEvents), 4 workers. */
export async function snsPath(stack: Stack, timeline: Timeline): Promise<Path> {
  const env = benchEnv(stack.endpoint);
  const aws = { endpoint: stack.endpoint, region: 'us-east-1' };
  const admin = createSqsClient(aws, {}, env);
  const adminSns = createSnsClient(aws, {}, env);
  const event = defineEvent({ name: `order.placed.be-${stack.tag}`, payload });
  const jobs = JOBS.map((name, i) =>
    defineJob({ name: `be-${stack.tag}-sns-${name}`, on: event, handle: (p: Payload) => timeline.ran(i, p.seq) }),
  );
  const made = await provisionEvents(new SqsQueueAdmin(admin), new SnsTopics(adminSns), jobs, QUEUE);
  const queueUrls = made.subscribers.map((s) => s.queueUrl);
  const calls = { producerSns: new CallTally(), producerSqs: new CallTally(), workerSqs: new CallTally() };
  const stopWorkers = await startWorkers(stack, queueUrls, jobs, calls.workerSqs);
  const sqs = countSqs(createSqsClient(aws, {}, env), calls.producerSqs);
  const sns = countSns(createSnsClient(aws, {}, env), calls.producerSns);
  const producer = createProducer({ queueUrl: queueUrls[0], queue: new SqsQueuePort(sqs), events: { topics: new SnsTopics(sns) } }, env);
  return {
    name: 'sns',
    timeline,
    calls,
    async send(seq) {
      await producer.publish(event, { orderId: `o-${seq}`, seq }, { id: `ev-${stack.tag}-${seq}` });
    },
    async close() {
      await stopWorkers();
      producer.close();
      sqs.destroy();
      sns.destroy();
      const topicArn = made.subscribers[0]?.topicArn;
      await deleteAll(
        admin,
        made.subscribers.flatMap((s) => [s.queueUrl, s.dlqUrl]),
      );
      if (topicArn !== undefined) await adminSns.send(new DeleteTopicCommand({ TopicArn: topicArn })).catch(() => {});
      admin.destroy();
      adminSns.destroy();
    },
  };
}

/** The direct path: 4 plain jobs on 4 queues (made as `queues create` makes them), 4 workers, 4 producers on one client. */
export async function directPath(stack: Stack, timeline: Timeline): Promise<Path> {
  const env = benchEnv(stack.endpoint);
  const aws = { endpoint: stack.endpoint, region: 'us-east-1' };
  const admin = createSqsClient(aws, {}, env);
  const jobs = JOBS.map((name, i) =>
    defineJob({ name: `be-${stack.tag}-direct-${name}`, args: payload, handle: (p: Payload) => timeline.ran(i, p.seq) }),
  );
  const pairs = await Promise.all(jobs.map((j) => provisionQueues(new SqsQueueAdmin(admin), { ...QUEUE, name: j.name })));
  const queueUrls = pairs.map((p) => p.queueUrl);
  const calls = { producerSns: new CallTally(), producerSqs: new CallTally(), workerSqs: new CallTally() };
  const stopWorkers = await startWorkers(stack, queueUrls, jobs, calls.workerSqs);
  const sqs = countSqs(createSqsClient(aws, {}, env), calls.producerSqs);
  const port = new SqsQueuePort(sqs);
  const senders = jobs.map((job, i) => ({ job, producer: createProducer({ queueUrl: queueUrls[i], queue: port }, env) }));
  return {
    name: 'direct',
    timeline,
    calls,
    async send(seq) {
      const args = { orderId: `o-${seq}`, seq };
      await Promise.all(senders.map(({ job, producer }) => producer.enqueue(job, args, { jobId: `ev-${stack.tag}-${seq}.${job.name}` })));
    },
    async close() {
      await stopWorkers();
      for (const s of senders) s.producer.close();
      sqs.destroy();
      await deleteAll(
        admin,
        pairs.flatMap((p) => [p.queueUrl, p.dlqUrl]),
      );
      admin.destroy();
    },
  };
}

async function deleteAll(admin: ReturnType<typeof createSqsClient>, urls: readonly string[]): Promise<void> {
  await Promise.all(urls.map((QueueUrl) => admin.send(new DeleteQueueCommand({ QueueUrl })).catch(() => {})));
}
