/**
 * `sqs-jobs/cdk`: sqs-jobs on AWS as an AWS CDK construct. Needs `aws-cdk-lib` (v2) and
 * `constructs` (v10) in the app, which the package lists as optional peers.
 *
 * @module sqs-jobs/cdk
 */
export { SqsJobs, type SqsJobsProps } from './sqs-jobs.js';
export type { JobAlarms } from './alarms.js';
export { SubscriberQueues, type Subscriber } from './event-queues.js';
export { type EventSetting, eventSettingsOf } from './event-settings.js';
export {
  DEFAULT_SETTINGS,
  type DeploySettings,
  type DeploySettingsInput,
  queueSpec,
  resolveSettings,
  stopTimeoutSeconds,
  visibilityTimeoutSeconds,
} from './settings.js';
export {
  PRODUCER_QUEUE_ACTIONS,
  PRODUCER_STORE_ACTIONS,
  WORKER_DLQ_ACTIONS,
  WORKER_QUEUE_ACTIONS,
  WORKER_STORE_ACTIONS,
} from './permissions.js';
