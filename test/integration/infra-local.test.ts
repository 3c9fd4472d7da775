import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, expect, it } from 'vitest';
import { applyQueues, settingsFromCdkJson } from '../../infra/aws/bin/local.js';
import { queueSpec, resolveSettings } from '../../src/cdk/settings.js';
import { readRedrivePolicy } from '../helpers/ops.js';
import { sqsClient } from '../helpers/stack.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());

it('applies the deployed queue settings to the local stack: same visibility, redrive and retention', async () => {
  const deployed = settingsFromCdkJson();
  const settings = resolveSettings({
    ...deployed,
    queueName: `parity-${randomUUID().slice(0, 8)}`,
    p99ProcessingSeconds: 21,
    maxReceiveCount: 4,
  });
  const pair = await applyQueues(sqs, settings);
  const spec = queueSpec(settings); // what the CDK stack is built from (asserted in infra/aws/test)
  const attributes = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: pair.queueUrl, AttributeNames: ['All'] }))).Attributes ?? {};
  expect(Number(attributes.VisibilityTimeout)).toBe(42);
  expect(Number(attributes.VisibilityTimeout)).toBe(spec.visibilityTimeout);
  expect(Number(attributes.MessageRetentionPeriod)).toBe(spec.messageRetentionSeconds);
  expect((await readRedrivePolicy(sqs, pair.queueUrl))?.maxReceiveCount).toBe(4);
  const dlq =
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: pair.dlqUrl, AttributeNames: ['MessageRetentionPeriod'] }))).Attributes ?? {};
  expect(Number(dlq.MessageRetentionPeriod)).toBe(1_209_600);
});
