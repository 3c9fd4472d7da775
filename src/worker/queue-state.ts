import { isFifoQueue, queueNameOf } from '../config/env.js';
import { rankOf } from '../core/priority.js';
import { ConfigError, toError } from '../core/errors.js';
import type { DeadLetterTarget, QueuePort } from '../ports/queue.js';
import type { QueueConfig } from './config.js';

/** What the worker knows of one of its queues (a ScheduledQueue to the scheduler: its lane and whether it is FIFO). */
export interface QueueState {
  readonly url: string;
  readonly fifo: boolean;
  /** Its lane: its weight, and its tier's rank (0 = high). */
  readonly weight: number;
  readonly rank: number;
  readonly config: QueueConfig;
  /** Where poison and exhausted messages go: the option, else the redrive policy's target. */
  deadLetterQueueUrl: string;
  /** From the redrive policy; undefined when SQS never dead-letters on its own. */
  maxReceiveCount: number | undefined;
}

export function queueState(config: QueueConfig): QueueState {
  return {
    config,
    url: config.url,
    fifo: isFifoQueue(config.url),
    weight: config.weight,
    rank: rankOf(config.priority),
    deadLetterQueueUrl: '',
    maxReceiveCount: undefined,
  };
}

/** Read the queue's redrive policy. Rejects with ConfigError when the queue has no DLQ to send poison to. */
export async function resolveDeadLetterQueue(sqs: Pick<QueuePort, 'deadLetterTarget'>, q: QueueState): Promise<void> {
  let target: DeadLetterTarget | undefined;
  try {
    target = await sqs.deadLetterTarget(q.url);
  } catch (error) {
    const lane = q.config.priority === 'normal' ? '' : ` (${createHint(q)})`;
    throw new ConfigError(`cannot read queue ${q.url}: ${toError(error).message}${lane}`, { cause: error });
  }
  q.maxReceiveCount = target?.maxReceiveCount;
  const dlq = q.config.deadLetterQueueUrl ?? target?.deadLetterQueueUrl;
  if (dlq === undefined) {
    throw new ConfigError(
      `queue ${q.url} has no RedrivePolicy, so poison messages would have nowhere to go: ${createHint(q)} or pass deadLetterQueueUrl`,
    );
  }
  q.deadLetterQueueUrl = dlq;
}

function createHint(q: QueueState): string {
  if (q.config.priority === 'normal') return `create it with \`sqs-jobs queues create --name ${queueNameOf(q.url)}\``;
  return `it is the ${q.config.priority} tier's lane: create the lanes with \`sqs-jobs queues create --name <queue> --tiers\``;
}
