/** What bench/fanout stands on: ElasticMQ, memcached and DynamoDB Local, started by run.sh on their own ports. */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
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

/**
 * CPU used so far (µs, user + system) by the process listening on a server's port (by `ss`), or
 * NaN when it cannot be told (no `ss`, another user's process).
 */
export function serverCpuMicros(server: 'dynamodb'): number {
  const port = new URL(server === 'dynamodb' ? DYNAMODB : EMQ).port;
  try {
    const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
    const pid = /pid=(\d+)/.exec(out)?.[1];
    if (pid === undefined) return Number.NaN;
    // Fields 14 and 15 of /proc/<pid>/stat, after the command name in parentheses: utime, stime in clock ticks (100/s).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return Number.NaN;
  }
}
