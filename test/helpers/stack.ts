import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, ReceiveMessageCommand, type SQSClient, type Message } from '@aws-sdk/client-sqs';
import memjs from 'memjs';
import { pino } from 'pino';
import { createSqsClient } from '../../src/adapters/aws-clients.js';
import type { QueuePair, QueueSpec } from '../../src/ops/queues.js';
import { createQueues } from '../../src/ops/wiring.js';

/**
 * The local stack started by infra/local/stack.sh (LocalStack or moto, and memcached, on loopback).
 * vitest.config.ts runs the integration suite once per server, each project with its own env.
 */
export const LOCAL_STACK: 'localstack' | 'moto' = process.env.SQS_JOBS_TEST_STACK === 'moto' ? 'moto' : 'localstack';
/** SQS message move tasks (StartMessageMoveTask): LocalStack has them, moto answers 500. */
export const LOCAL_ENDPOINT = process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:4566';
export const LOCAL_MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211';
/** The job store's DynamoDB: DynamoDB Local (infra/local/dynamodb.sh), the same for both projects. */
export const LOCAL_DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4569';
export const LOCAL_ENV = { AWS_ENDPOINT_URL: LOCAL_ENDPOINT, AWS_REGION: 'us-east-1', SQS_JOBS_MEMCACHED: LOCAL_MEMCACHED } as const;

export const quietLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

export function sqsClient(): SQSClient {
  return createSqsClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
}

/** A fresh queue pair with a unique name, so tests never see each other's messages. */
export async function freshQueues(sqs: SQSClient, prefix: string, spec: Partial<QueueSpec> = {}): Promise<QueuePair> {
  const fifo = spec.name?.endsWith('.fifo') ?? false;
  const name = `${prefix}-${randomUUID().slice(0, 8)}${fifo ? '.fifo' : ''}`;
  return createQueues(sqs, { ...spec, name });
}

/** Receive what is visible now (short polls until one comes back empty). */
export async function drain(sqs: SQSClient, queueUrl: string, visibilityTimeout = 30): Promise<Message[]> {
  const all: Message[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: visibilityTimeout,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    if (!out.Messages?.length) return all;
    all.push(...out.Messages);
  }
}

export async function queueCounts(sqs: SQSClient, queueUrl: string): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const a = out.Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

export function memcachedClient(servers = LOCAL_MEMCACHED): memjs.Client {
  // 2 s: a loaded CI machine's memcached can take over memjs's default 0.5 s to answer.
  return memjs.Client.create(servers, { retries: 0, timeout: 2, logger: { log: () => {} } });
}

/** Wait until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
