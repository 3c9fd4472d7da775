/**
 * This repository's own deployment: one stack holding the `SqsJobs` construct (src/cdk, shipped as
 * `sqs-jobs/cdk`), the worker image built from the repository's Dockerfile, settings from cdk.json
 * ("context": { "sqsJobs": { ... } }) or `cdk deploy -c sqsJobs='{"queueName":"..."}'`.
 */
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { SqsJobs } from '../../../src/cdk/index.js';

const app = new App();
// Not 'SqsJobsWorker', the stack the app made before the construct: see docs/operations/deploy.md.
const stack = new Stack(app, app.node.tryGetContext('stackName') ?? 'SqsJobs', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
const given: unknown = app.node.tryGetContext('sqsJobs') ?? {};
new SqsJobs(stack, 'Jobs', {
  ...(typeof given === 'string' ? JSON.parse(given) : given),
  image: ecs.ContainerImage.fromAsset(fileURLToPath(new URL('../../..', import.meta.url))),
});
