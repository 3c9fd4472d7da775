/**
 * What bench/lambda runs on, in this one process: on run.sh's servers, a queue of its own (with
 * its DLQ: sqs-jobs' handler refuses a queue without one), sqs-jobs' job table (createJobTable: the
 * lock's items live there) and Powertools' idempotency table (its default key, `id`); then the two
 * handlers, each on SDK clients of its own whose every call is counted by operation (a middleware
 * in the `deserialize` step, once per attempt: bench/schedules/counted.ts). Powertools has no SQS
 * client: the mapping deletes what it does not report failed. `plain` is an uncounted client for
 * what the bench itself does (sending and receiving the failure path's messages, the tables).
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { createDynamoClient, createSqsClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { createQueues } from '../../src/ops/wiring.js';
import { CallTally } from '../events/counting.js';
import { countCalls } from '../schedules/counted.js';
import { REGION } from './events.js';
import { floorHandler } from './floor.js';
import { CREDENTIALS } from './jobs.js';
import { POWERTOOLS_KEY, powertoolsHandler } from './powertools-side.js';
import { ENV, type Servers, sqsJobsClients, sqsJobsHandler } from './sqs-jobs-side.js';

/** One side's calls, by operation. */
export interface Tallies {
  readonly sqs: CallTally;
  readonly dynamo: CallTally;
}

export interface Stack {
  readonly queueUrl: string;
  /** sqs-jobs' job table (the lock's) and Powertools' idempotency table. */
  readonly tables: { readonly sqsJobs: string; readonly powertools: string };
  readonly sqsJobs: ReturnType<typeof sqsJobsHandler>;
  readonly powertools: ReturnType<typeof powertoolsHandler>;
  /** The bare writes under both (floor.ts), uncounted. */
  readonly floor: ReturnType<typeof floorHandler>;
  readonly calls: { readonly sqsJobs: Tallies; readonly powertools: Tallies };
  readonly plain: SQSClient;
  close(): Promise<void>;
}

export async function buildStack(s: Servers): Promise<Stack> {
  const id = randomUUID().slice(0, 8);
  const plain = createSqsClient({ endpoint: s.sqs, region: REGION }, {}, ENV);
  const plainDynamo = createDynamoClient({ endpoint: s.dynamodb, region: REGION }, {}, ENV);
  const tables = { sqsJobs: `bench-lambda-jobs-${id}`, powertools: `bench-lambda-idempotency-${id}` };
  await createJobTable(plainDynamo, tables.sqsJobs);
  await plainDynamo.send(
    new CreateTableCommand({
      TableName: tables.powertools,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: POWERTOOLS_KEY, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: POWERTOOLS_KEY, KeyType: 'HASH' }],
    }),
  );
  plainDynamo.destroy();
  const { queueUrl } = await createQueues(plain, { name: `bench-lambda-${id}`, visibilityTimeout: 60 });

  const calls = {
    sqsJobs: { sqs: new CallTally(), dynamo: new CallTally() },
    powertools: { sqs: new CallTally(), dynamo: new CallTally() },
  };
  const mine = sqsJobsClients(s);
  const sqsJobs = sqsJobsHandler({
    queueUrl,
    table: tables.sqsJobs,
    sqs: countCalls(mine.sqs, calls.sqsJobs.sqs),
    dynamo: countCalls(mine.dynamo, calls.sqsJobs.dynamo),
  });
  // The client Powertools makes from its clientConfig (new DynamoDBClient(clientConfig)), made here to be counted.
  const theirs = new DynamoDBClient({ endpoint: s.dynamodb, region: REGION, credentials: CREDENTIALS });
  const powertools = powertoolsHandler({ table: tables.powertools, client: countCalls(theirs, calls.powertools.dynamo) });
  const bare = new DynamoDBClient({ endpoint: s.dynamodb, region: REGION, credentials: CREDENTIALS });
  const floor = floorHandler(bare, tables.powertools);
  return {
    queueUrl,
    tables,
    sqsJobs,
    powertools,
    floor,
    calls,
    plain,
    close: async () => {
      await sqsJobs.close();
      mine.sqs.destroy();
      mine.dynamo.destroy();
      theirs.destroy();
      bare.destroy();
      plain.destroy();
    },
  };
}
