import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import { provisionQueues, type QueuePair, type QueueSpec } from './queues.js';

/** An SQSClient (@aws-sdk/client-sqs), or any QueueAdmin. */
export type QueueAdminOrClient = QueueAdmin | ConstructorParameters<typeof SqsQueueAdmin>[0];

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
