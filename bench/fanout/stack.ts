/** What bench/fanout stands on: ElasticMQ, memcached and DynamoDB Local, started by run.sh on their own ports. */
import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createQueues } from '../../src/index.js';

export const EMQ = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9524';
export const MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11511';
export const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4669';
export const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };

const sqs = new SQSClient({ endpoint: EMQ, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });

export async function freshQueue(label: string, visibilityTimeout = 30): Promise<string> {
  const pair = await createQueues(sqs, { name: `bf-${label}-${randomUUID().slice(0, 8)}`, visibilityTimeout, maxReceiveCount: 5 });
  return pair.queueUrl;
}

export function closeStack(): void {
  sqs.destroy();
}

/** Poll `check` every 20 ms until it holds; throw after `timeoutMs`, naming what it waited for. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
