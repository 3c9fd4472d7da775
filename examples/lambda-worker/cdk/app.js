// @ts-check
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsJobs } from 'sqs-jobs/cdk';

// `npx cdk deploy`: the queue and its DLQ, the job table, the function running handler.js
// (bundled by esbuild here, no Docker) on the queue's event source mapping, alarms and a dashboard.
const app = new App();
const stack = new Stack(app, 'Thumbnails', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
const jobs = new SqsJobs(stack, 'Jobs', {
  runtime: 'lambda',
  entry: fileURLToPath(new URL('../handler.js', import.meta.url)),
  queueName: 'thumbnails',
  jobStore: {},
  p99ProcessingSeconds: 20,
  oldestMessageSlaSeconds: 300,
  lambda: { batchSize: 10, maxConcurrency: 5 },
});
// The upload service that enqueues thumbnails: send to the queue and record its tracked jobs, nothing else.
const uploader = new iam.Role(stack, 'UploaderRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
jobs.grantEnqueue(uploader);
