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
import { LIST_INDEXES, LIST_PROJECTED } from '../core/job-list-index.js';

const keys = (index: { partitionKey: string; sortKey: string }) => [
  { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
  { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
];

/**
 * The table's indexes, each by its one definition: the due index of schedules and kept jobs
 * (core/due-index.ts, read by dynamodb-due-index.ts), then the jobs list's three
 * (core/job-list-index.ts, read by dynamodb-job-list.ts), which carry only what a row shows.
 */
const INDEX_SPECS = [
  { IndexName: DUE_INDEX.name, KeySchema: keys(DUE_INDEX), Projection: { ProjectionType: 'ALL' as const } },
  ...Object.values(LIST_INDEXES).map((index) => ({
    IndexName: index.name,
    KeySchema: keys(index),
    Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...LIST_PROJECTED] },
  })),
];
const ATTRIBUTES = [
  { AttributeName: 'pk', AttributeType: 'S' as const },
  { AttributeName: DUE_INDEX.partitionKey, AttributeType: 'S' as const },
  { AttributeName: DUE_INDEX.sortKey, AttributeType: 'N' as const },
  { AttributeName: LIST_INDEXES.byState.partitionKey, AttributeType: 'S' as const },
  { AttributeName: LIST_INDEXES.byJob.partitionKey, AttributeType: 'S' as const },
  { AttributeName: LIST_INDEXES.byTenant.partitionKey, AttributeType: 'S' as const },
  { AttributeName: LIST_INDEXES.byState.sortKey, AttributeType: 'S' as const },
];

/**
 * Create the job store's table if it does not exist: on-demand, partition key `pk`, TTL on
 * `expiresAt`, the schedules' due index and the jobs list's indexes. A table made before an index
 * gets it added ('index added': one UpdateTable each, one after the other, as DynamoDB allows; on
 * AWS an index builds in the background, and this waits until it is active). Its records' list
 * keys are backfillListKeys' (dynamodb-list-keys.ts), which `sqs-jobs store create` runs next when
 * it added a list index. Answers what it did; `onAdded` hears each index it added, by name. (On AWS,
 * prefer the CDK stack, which also turns on point-in-time recovery; never run this against its table.)
 */
export async function createJobTable(
  client: DynamoDBClient,
  table: string,
  onAdded: (index: string) => void = () => {},
): Promise<'created' | 'index added' | 'already there'> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: ATTRIBUTES,
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        GlobalSecondaryIndexes: INDEX_SPECS,
      }),
    );
  } catch (error) {
    if (error instanceof ResourceInUseException) {
      let added = false;
      for (const spec of INDEX_SPECS) {
        if (!(await addIndex(client, table, spec))) continue;
        added = true;
        onAdded(spec.IndexName);
      }
      return added ? 'index added' : 'already there';
    }
    throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: table });
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }),
  );
  return 'created';
}

/** Add an index to a table made without it, and wait until it is active (one being added already too): false when it had it. */
async function addIndex(client: DynamoDBClient, table: string, spec: (typeof INDEX_SPECS)[number]): Promise<boolean> {
  const indexOf = async () =>
    (await client.send(new DescribeTableCommand({ TableName: table }))).Table?.GlobalSecondaryIndexes?.find(
      (i) => i.IndexName === spec.IndexName,
    );
  const added = (await indexOf()) === undefined;
  if (added)
    await client.send(
      new UpdateTableCommand({
        TableName: table,
        // The new index's keys only: DynamoDB refuses definitions no key uses.
        AttributeDefinitions: ATTRIBUTES.filter((a) => spec.KeySchema.some((k) => k.AttributeName === a.AttributeName)),
        GlobalSecondaryIndexUpdates: [{ Create: spec }],
      }),
    );
  // DynamoDB builds the index from the table's items (backfilling): on a large table, minutes.
  for (let waited = 0; (await indexOf())?.IndexStatus !== 'ACTIVE'; waited += 2) {
    if (waited > 1_800) throw new Error(`the index ${spec.IndexName} of ${table} is not active after 30 minutes`);
    await sleep(2_000);
  }
  return added;
}
