import {
  CreateTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';

/**
 * Create the job store's table if it does not exist: on-demand, partition key `pk`, TTL on
 * `expiresAt`. Answers true when it was created now. (On AWS, prefer the CDK stack, which also
 * turns on point-in-time recovery.)
 */
export async function createJobTable(client: DynamoDBClient, table: string): Promise<boolean> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  } catch (error) {
    if (error instanceof ResourceInUseException) return false;
    throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: table });
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: table, TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } }),
  );
  return true;
}
