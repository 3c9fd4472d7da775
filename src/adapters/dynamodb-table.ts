import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';

import { DUE_INDEX } from '../core/due-index.js';

/** The due index of schedules and kept jobs (dynamodb-due-index.ts), by its one definition (core/due-index.ts). */
const SCHEDULE_INDEX_SPEC = {
  IndexName: DUE_INDEX.name,
  KeySchema: [
    { AttributeName: DUE_INDEX.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: DUE_INDEX.sortKey, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
};
const ATTRIBUTES = [
  { AttributeName: 'pk', AttributeType: 'S' as const },
  { AttributeName: DUE_INDEX.partitionKey, AttributeType: 'S' as const },
  { AttributeName: DUE_INDEX.sortKey, AttributeType: 'N' as const },
];

/**
 * Create the job store's table if it does not exist: on-demand, partition key `pk`, TTL on
 * `expiresAt`, and the schedules' due index. A table made before that index gets it added (one
 * UpdateTable; on AWS the index builds in the background, and this waits until it is active).
 * Answers what it did. (On AWS, prefer the CDK stack, which also turns on point-in-time recovery.)
 */
export async function createJobTable(client: DynamoDBClient, table: string): Promise<'created' | 'index added' | 'already there'> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ATTRIBUTES,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [SCHEDULE_INDEX_SPEC],
      }),
    );
  } catch (error) {
    if (error instanceof ResourceInUseException) return (await addScheduleIndex(client, table)) ? 'index added' : 'already there';
    throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: table });
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }),
  );
  return 'created';
}

/** Add the schedules' due index to a table made without it, and wait until it is active (one being added already too): false when it had it. */
async function addScheduleIndex(client: DynamoDBClient, table: string): Promise<boolean> {
  const indexOf = async () =>
    (await client.send(new DescribeTableCommand({ TableName: table }))).Table?.GlobalSecondaryIndexes?.find(
      (i) => i.IndexName === DUE_INDEX.name,
    );
  const added = (await indexOf()) === undefined;
  if (added)
    await client.send(
      new UpdateTableCommand({
        TableName: table,
        AttributeDefinitions: ATTRIBUTES,
        GlobalSecondaryIndexUpdates: [{ Create: SCHEDULE_INDEX_SPEC }],
      }),
    );
  // DynamoDB builds the index from the table's items (backfilling): on a large table, minutes.
  for (let waited = 0; (await indexOf())?.IndexStatus !== 'ACTIVE'; waited += 2) {
    if (waited > 1_800) throw new Error(`the index ${DUE_INDEX.name} of ${table} is not active after 30 minutes`);
    await sleep(2_000);
  }
  return added;
}
