import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { CloudWatchReader } from '../../src/adapters/cloudwatch-reader.js';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import type { StatsSources } from '../../src/ops/stats.js';

/** What `sqs-jobs stats` reads, over these SDK clients (as the CLI builds it). */
export function statsSources(sqs: SQSClient, cw: CloudWatchClient): StatsSources {
  return { queue: new SqsQueuePort(sqs), admin: new SqsQueueAdmin(sqs), metrics: new CloudWatchReader(cw) };
}

/** The queue's redrive policy as SQS has it now, or undefined when it has none. */
export async function readRedrivePolicy(
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ deadLetterTargetArn: string; maxReceiveCount: number } | undefined> {
  const s = await new SqsQueueAdmin(sqs).settings(queueUrl);
  return s.deadLetterTargetArn === undefined
    ? undefined
    : { deadLetterTargetArn: s.deadLetterTargetArn, maxReceiveCount: s.maxReceiveCount ?? 0 };
}
