import { createSqsClient } from '../adapters/aws-clients.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { type Env, resolveAwsSettings } from '../config/env.js';
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
