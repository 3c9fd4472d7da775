import { isFifoQueue, queueNameOf } from '../config/env.js';
import { ConfigError, toError } from '../core/errors.js';
import type { DeadLetterTarget, QueuePort } from '../ports/queue.js';
import type { QueueConfig } from './config.js';
import type { ScheduledQueue } from './intake/scheduler.js';

/** What the worker knows of one of its queues. */
export interface QueueState extends ScheduledQueue {
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
    credit: 0,
    deadLetterQueueUrl: '',
    maxReceiveCount: undefined,
  };
}

/** Read the queue's redrive policy. Rejects with ConfigError when the queue has no DLQ to send poison to. */
export async function resolveDeadLetterQueue(sqs: QueuePort, q: QueueState): Promise<void> {
  let target: DeadLetterTarget | undefined;
  try {
    target = await sqs.deadLetterTarget(q.url);
  } catch (error) {
    throw new ConfigError(`cannot read queue ${q.url}: ${toError(error).message}`, { cause: error });
  }
  q.maxReceiveCount = target?.maxReceiveCount;
  const dlq = q.config.deadLetterQueueUrl ?? target?.deadLetterQueueUrl;
  if (dlq === undefined) {
    throw new ConfigError(
      `queue ${q.url} has no RedrivePolicy, so poison messages would have nowhere to go: create it with \`sqs-jobs queues create --name ${queueNameOf(q.url)}\` or pass deadLetterQueueUrl`,
    );
  }
  q.deadLetterQueueUrl = dlq;
}
