/**
 * `sqs-jobs/lambda`: run the jobs a worker runs on Lambda's SQS event source mapping instead,
 * with the same rules (docs/guide/lambda.md).
 *
 * @module sqs-jobs/lambda
 */
export { createLambdaHandler } from './handler.js';
export type { LambdaHandlerOptions } from './options.js';
export type { LambdaHandler, SqsEvent, SqsBatchResponse } from './event.js';
