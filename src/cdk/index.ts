/**
 * `sqs-jobs/cdk`: sqs-jobs on AWS as an AWS CDK construct. Needs `aws-cdk-lib` (v2) and
 * `constructs` (v10) in the app, which the package lists as optional peers.
 *
 * @module sqs-jobs/cdk
 */
export { SqsJobs, type SqsJobsProps } from './sqs-jobs.js';
export type { JobAlarms } from './alarms.js';
export { eventSettingsOf } from './event-settings.js';
export { scheduleSettingsOf } from './schedule-settings.js';
export { DEFAULT_SETTINGS, resolveSettings } from './settings.js';
