// @ts-check
import { fileURLToPath } from 'node:url';
import { App, Stack } from 'aws-cdk-lib';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { SqsJobs } from 'sqs-jobs/cdk';

// `npx cdk deploy`: the queue and its DLQ, the job table, memcached, the Fargate service running
// this folder's image (built from its Dockerfile), scaling on depth, alarms and a dashboard.
const app = new App();
const stack = new Stack(app, 'Thumbnails', {
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
const jobs = new SqsJobs(stack, 'Jobs', {
  image: ecs.ContainerImage.fromAsset(fileURLToPath(new URL('..', import.meta.url))),
  queueName: 'thumbnails',
  jobsModule: 'jobs.js',
  jobStore: {},
  p99ProcessingSeconds: 20,
  concurrency: 16,
  maxTasks: 4,
  shutdownTimeoutSeconds: 30,
  oldestMessageSlaSeconds: 300,
});
// The upload service that enqueues thumbnails (here a Lambda function's role): send to the
// queue and record its tracked jobs, nothing else.
const uploader = new iam.Role(stack, 'UploaderRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
jobs.grantEnqueue(uploader);
