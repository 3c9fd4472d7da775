import { createSqsClient } from '../adapters/aws-clients.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { z } from 'zod';
import {
  type Env,
  lockKeyPrefixSchema,
  parseConfig,
  resolveAwsSettings,
  resolveMemcachedSettings,
  resolveQueueUrl,
} from '../config/env.js';
import { MemcachedLock } from '../adapters/memcached-lock.js';
import { Pauses } from './pauses.js';
import { ConfigError } from '../core/errors.js';
import { createProducer, type Producer } from '../producer/producer.js';
import { storeOptionSchema } from '../status/store.js';
import { resolveJobStore } from '../status/wiring.js';
import { Schedules } from './schedules.js';
import { resolveSnsSettings } from '../config/sns-endpoint.js';
import type { AnyDefinition } from '../core/job.js';
import { type EventsProvisioned, provisionEvents } from './events.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import { provisionQueues, type QueuePair, type QueueSpec } from './queues.js';

/** An SQSClient (@aws-sdk/client-sqs), or any QueueAdmin. */
type QueueAdminOrClient = QueueAdmin | ConstructorParameters<typeof SqsQueueAdmin>[0];

function isQueueAdmin(v: QueueAdminOrClient): v is QueueAdmin {
  return typeof (v as QueueAdmin).findQueue === 'function' && typeof (v as QueueAdmin).applySettings === 'function';
}

/**
 * Create a job queue and its dead-letter queue, wired with a RedrivePolicy (and with `spillover`,
 * the spillover queue `<name>-spill`). Idempotent: what exists keeps the settings `spec` does not
 * give. `changes` says what was created or changed.
 */
export function createQueues(sqs: QueueAdminOrClient, spec: QueueSpec): Promise<QueuePair> {
  return provisionQueues(isQueueAdmin(sqs) ? sqs : new SqsQueueAdmin(sqs), spec);
}

/**
 * Make what the jobs that run on events need (defineJob({ on })): each event's SNS topic, each
 * subscriber's queue (named after the job) with its DLQ, a queue policy letting only its topic
 * send, and the subscription (raw delivery, the job's filter policy). Idempotent. `queue`: the
 * settings each subscriber queue gets; `endpoint`, `region`: SQS's (SNS's from AWS_ENDPOINT_URL_SNS, else the same).
 */
export async function createEvents(
  jobs: readonly AnyDefinition[],
  options: { queue?: Parameters<typeof provisionEvents>[3]; endpoint?: string; region?: string; snsEndpoint?: string } = {},
  env: Env = process.env,
): Promise<EventsProvisioned> {
  // Loaded here: importing sqs-jobs does not load the SNS client.
  const { createSnsClient, SnsTopics } = await import('../adapters/sns-topics.js');
  const sqs = createSqsClient(resolveAwsSettings({ endpoint: options.endpoint, region: options.region }, env), {}, env);
  const sns = createSnsClient(
    resolveSnsSettings({ endpoint: options.snsEndpoint, region: options.region }, env, undefined, options.endpoint),
    {},
    env,
  );
  try {
    return await provisionEvents(new SqsQueueAdmin(sqs), new SnsTopics(sns), jobs, options.queue);
  } finally {
    sqs.destroy();
    sns.destroy();
  }
}

const schedulesOptionsSchema = z
  .object({
    /** Where schedules are kept: `{ table, endpoint?, region?, ttlDays? }` or a JobStore; default SQS_JOBS_JOB_TABLE. */
    store: storeOptionSchema,
    /** Where the schedules this puts send their jobs; default SQS_JOBS_QUEUE_URL. */
    queueUrl: z.string().optional(),
    /** SQS's endpoint and region, for `trigger`. */
    endpoint: z.string().optional(),
    region: z.string().optional(),
  })
  .strict();

export type SchedulesOptions = z.input<typeof schedulesOptionsSchema>;

/**
 * Schedules in the job store: put (`upsert` at run time, `sync` for an app's declared ones), list,
 * pause, resume, trigger, remove. Throws ConfigError without a job store. close() when done.
 */
export function createSchedules(options: SchedulesOptions = {}, env: Env = process.env): Schedules {
  const o = parseConfig(schedulesOptionsSchema, options, 'options', 'invalid schedules options');
  const store = resolveJobStore(o.store, env);
  if (store === undefined)
    throw new ConfigError('invalid schedules options: schedules are kept in the job store: pass options.store or set SQS_JOBS_JOB_TABLE');
  const producers = new Map<string, Producer>();
  return new Schedules({
    store,
    queueUrl: () => resolveQueueUrl(o.queueUrl, env, 'options.queueUrl'),
    producer: (queueUrl) => {
      let p = producers.get(queueUrl);
      if (p === undefined) {
        p = createProducer({ queueUrl, store, endpoint: o.endpoint, region: o.region }, env);
        producers.set(queueUrl, p);
      }
      return p;
    },
    close: () => {
      for (const p of producers.values()) p.close();
      if (store !== o.store) store.close();
    },
  });
}

const pausesOptionsSchema = z
  .object({
    /** Where pauses are kept: `{ table, endpoint?, region?, ttlDays? }` or a JobStore; default SQS_JOBS_JOB_TABLE. */
    store: storeOptionSchema,
    /** The workers' memcached, told of each change ([tls://]host:port[,…]); default SQS_JOBS_MEMCACHED. */
    memcached: z.string().optional(),
    /** The workers' lockKeyPrefix (default `sqsjobs:`): the notice must be where they look. */
    lockKeyPrefix: lockKeyPrefixSchema,
  })
  .strict();

/** Where createPauses keeps pauses (the job store) and tells the workers (their memcached). */
export type PausesOptions = z.input<typeof pausesOptionsSchema>;

/**
 * Pause and resume queues, job types and tenants (Pauses). Throws ConfigError without a job store
 * (pauses must outlive memcached and the workers). close() when done.
 */
export function createPauses(options: PausesOptions = {}, env: Env = process.env): Pauses {
  const o = parseConfig(pausesOptionsSchema, options, 'options', 'invalid pauses options');
  const store = resolveJobStore(o.store, env);
  const controls = store?.controls;
  if (store === undefined || controls === undefined) {
    if (store !== undefined && store !== o.store) store.close();
    throw new ConfigError('invalid pauses options: pauses are kept in the job store: pass options.store or set SQS_JOBS_JOB_TABLE');
  }
  const memcached = resolveMemcachedSettings(o.memcached, env, 'options.memcached');
  const lock = memcached === undefined ? undefined : new MemcachedLock({ ...memcached, keyPrefix: o.lockKeyPrefix });
  return new Pauses({
    controls,
    notices: lock?.controls,
    close: () => {
      lock?.close();
      if (store !== o.store) store.close();
    },
  });
}
