import { createSqsClient } from '../adapters/aws-clients.js';
import { DynamoLock } from '../adapters/dynamodb-lock.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import type { Env } from '../config/env.js';
import type { QueuePort } from '../ports/queue.js';
import { isJobStore } from '../status/store.js';
import type { WorkerConfig } from '../worker/config.js';

/* The Lambda handler's wiring: the adapters it picks when not given ports. */

/** The queue port: the one given, else SQS through a client of its own (`destroy` closes it). */
export function queuePortFor(c: WorkerConfig, env: Env): { queue: QueuePort; destroy: () => void } {
  if (c.queue !== undefined) return { queue: c.queue, destroy: () => {} };
  const client = createSqsClient(c.aws, { maxSockets: 50, requestTimeoutMs: 10_000 }, env);
  return { queue: new SqsQueuePort(client, client), destroy: () => client.destroy() };
}

/**
 * Without memcached, the dedupe lock is on the job store's table (DynamoLock), when the store is
 * given as a table (the option, or SQS_JOBS_JOB_TABLE): Lambda functions seldom reach an
 * ElastiCache node. With neither, none (at-least-once), as for a worker; said once at start.
 */
export function withDefaultLock(c: WorkerConfig, env: Env): WorkerConfig {
  if (c.lock !== undefined || c.memcached !== undefined) return c;
  const table: { table: string; endpoint?: string | undefined; region?: string | undefined } | undefined = isJobStore(c.store)
    ? undefined
    : (c.store ?? (env.SQS_JOBS_JOB_TABLE ? { table: env.SQS_JOBS_JOB_TABLE } : undefined));
  if (table === undefined) return c;
  const lock = new DynamoLock({ table: table.table, endpoint: table.endpoint, region: table.region, keyPrefix: c.lockKeyPrefix }, env);
  return Object.freeze({ ...c, lock });
}
