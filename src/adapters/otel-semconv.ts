/**
 * The OpenTelemetry attribute names sqs-jobs writes: the messaging semantic conventions v1.45
 * (still "Development" there, so copied here rather than imported from the incubating entry), and
 * sqs-jobs' own for what the conventions have no name for.
 */
export const ATTR_MESSAGING_SYSTEM_NAME = 'messaging.system.name';
export const MESSAGING_SYSTEM_NAME_AWS_SQS = 'aws.sqs';
/** Deprecated in v1.45 for `messaging.system.name`; still written, for backends on the older conventions. */
export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const MESSAGING_SYSTEM_AWS_SQS = 'aws_sqs';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
export const ATTR_MESSAGING_BATCH_MESSAGE_COUNT = 'messaging.batch.message_count';
export const ATTR_AWS_SQS_QUEUE_URL = 'aws.sqs.queue.url';
/** SNS: the same name under messaging.system and messaging.system.name. */
export const MESSAGING_SYSTEM_NAME_AWS_SNS = 'aws.sns';
export const ATTR_AWS_SNS_TOPIC_ARN = 'aws.sns.topic.arn';
export const ATTR_ERROR_TYPE = 'error.type';

export const ATTR_JOB_NAME = 'sqs_jobs.job.name';
export const ATTR_JOB_ID = 'sqs_jobs.job.id';
export const ATTR_TENANT = 'sqs_jobs.tenant';
export const ATTR_ATTEMPT = 'sqs_jobs.attempt';
export const ATTR_BATCH_KEY = 'sqs_jobs.batch.key';
export const ATTR_EVENT_NAME = 'sqs_jobs.event.name';
export const ATTR_EVENT_ID = 'sqs_jobs.event.id';
