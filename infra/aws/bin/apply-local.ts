/**
 * `npm run infra:local`: apply the queue part of the deployment (cdk.json's sqsJobs settings) to
 * the local stack, so local and deployed queues have the same attributes.
 */
import { createSqsClient } from '../../../src/adapters/aws-clients.js';
import { resolveAwsSettings } from '../../../src/config/env.js';
import { visibilityTimeoutSeconds } from '../../../src/cdk/settings.js';
import { applyQueues, settingsFromCdkJson } from './local.js';

const settings = settingsFromCdkJson();
const sqs = createSqsClient(resolveAwsSettings({}));
const pair = await applyQueues(sqs, settings);
console.log(`queue: ${pair.queueUrl}  (visibility ${visibilityTimeoutSeconds(settings)} s = 2 × p99 ${settings.p99ProcessingSeconds} s)`);
console.log(`dlq:   ${pair.dlqUrl}  (after ${pair.maxReceiveCount} receives, 14-day retention)`);
console.log(`export SQS_JOBS_QUEUE_URL=${pair.queueUrl}`);
sqs.destroy();
