/**
 * sqs-jobs' handler as a function's entry, for cold.ts to bundle: what main.ts measures warm,
 * made at module load as Lambda runs it, its servers and names from the environment cold.ts sets.
 */
import { sqsJobsClients, sqsJobsHandler } from './sqs-jobs-side.js';

const env = process.env;
const clients = sqsJobsClients({ sqs: env.BENCH_LAMBDA_SQS!, dynamodb: env.BENCH_LAMBDA_DYNAMODB!, region: 'us-east-1' });
export const handler = sqsJobsHandler({ queueUrl: env.BENCH_LAMBDA_QUEUE_URL!, table: env.BENCH_LAMBDA_JOB_TABLE!, ...clients });
