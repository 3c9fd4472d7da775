/**
 * The sqs-jobs side: createLambdaHandler as a function without memcached runs it (the dedupe lock
 * on the job table, DynamoLock: two conditional writes a job), metrics off and a silent logger, so
 * neither side writes a line. Its SQS client goes through SqsQueuePort, so that main.ts can count
 * its calls; both clients are made as the handler and DynamoLock make their own when given none
 * (their sockets, timeouts and attempts), so a counted run is the uncounted one. Used by main.ts
 * with counted clients and by entry-sqs-jobs.ts, bundled, with clients of its own.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
// The package's public entries (sqs-jobs, sqs-jobs/adapters, sqs-jobs/lambda) from src/, so that
// the bundle (cold.ts) holds what a user's does, from the code as it is now.
import { createDynamoClient, createSqsClient, DynamoLock, SqsQueuePort } from '../../src/adapters/index.js';
import { defineJob } from '../../src/index.js';
import { createLambdaHandler } from '../../src/lambda/index.js';
import { args, CREDENTIALS, failWork, noopWork } from './jobs.js';

const noop = defineJob({ name: 'noop', args, handle: (a) => noopWork(a) });
const fails = defineJob({ name: 'fails', args, handle: (a) => failWork(a) });

export interface Servers {
  readonly sqs: string;
  readonly dynamodb: string;
  readonly region: string;
}

/** The fake credentials (jobs.ts), as the environment gives them: sqs-jobs' clients read them there on loopback. */
export const ENV = { AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey };

/** The handler's clients, as it and DynamoLock make them (runtime.ts, dynamodb-lock.ts). */
export function sqsJobsClients(s: Servers): { sqs: SQSClient; dynamo: DynamoDBClient } {
  const at = { endpoint: s.dynamodb, region: s.region };
  return {
    sqs: createSqsClient({ endpoint: s.sqs, region: s.region }, { maxSockets: 50, requestTimeoutMs: 10_000 }, ENV),
    dynamo: createDynamoClient(at, { maxSockets: 50, requestTimeoutMs: 3_000, maxAttempts: 3 }, ENV),
  };
}

export function sqsJobsHandler(o: { queueUrl: string; table: string; sqs: SQSClient; dynamo: DynamoDBClient }) {
  return createLambdaHandler(
    {
      jobs: [noop, fails],
      queues: [o.queueUrl],
      queue: new SqsQueuePort(o.sqs),
      lock: new DynamoLock({ table: o.table, client: o.dynamo }),
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
    },
    {},
  );
}
