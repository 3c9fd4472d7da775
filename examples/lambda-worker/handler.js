// @ts-check
import { createLambdaHandler } from 'sqs-jobs/lambda';
import { makeThumbnail } from './jobs.js';

// The function's handler: the same job definitions a Fargate worker runs. Made once per container,
// at load. The queue, the job table and the visibility timeout come from the environment the
// construct sets (SQS_JOBS_QUEUE_URL, SQS_JOBS_JOB_TABLE, SQS_JOBS_VISIBILITY_TIMEOUT); without
// memcached, the dedupe lock is on the job table.
export const handler = createLambdaHandler({ jobs: [makeThumbnail] });
