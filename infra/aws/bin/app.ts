import { App } from 'aws-cdk-lib';
import { resolveSettings } from '../lib/settings.js';
import { SqsJobsWorkerStack } from '../lib/worker-stack.js';

const app = new App();
new SqsJobsWorkerStack(app, 'SqsJobsWorker', {
  settings: resolveSettings(app.node.tryGetContext('sqsJobs')),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
