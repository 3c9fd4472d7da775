import { readFileSync } from 'node:fs';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { QueuePair } from '../../../src/ops/queues.js';
import { createQueues } from '../../../src/ops/wiring.js';
import { queueSpec, resolveSettings, type DeploySettings } from '../../../src/cdk/settings.js';

/** The settings cdk.json gives the deployed stack. */
export function settingsFromCdkJson(path = new URL('../cdk.json', import.meta.url)): DeploySettings {
  const cdk = JSON.parse(readFileSync(path, 'utf8')) as { context?: { sqsJobs?: unknown } };
  return resolveSettings(cdk.context?.sqsJobs ?? {});
}

/** Create the same queue and DLQ, with the same attributes, on whatever endpoint `sqs` points at. */
export function applyQueues(sqs: SQSClient, settings: DeploySettings): Promise<QueuePair> {
  return createQueues(sqs, queueSpec(settings));
}
