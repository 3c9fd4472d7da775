/**
 * The floor under both handlers' CPU: the two conditional writes a record costs on either side
 * (a PutItem that must find no item, then an UpdateItem of it), made bare on a plain SDK client
 * with nothing around them: no body read, no schema, no batch bookkeeping. What a handler spends
 * above it is its own; on a no-op job both handlers are mostly this (cpu.ts runs it in the same
 * rounds). Written to Powertools' table under keys of its own (`floor#<message id>`).
 */
import { type DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { SqsBatchResponse, SqsEvent } from '../../src/lambda/event.js';
import { POWERTOOLS_KEY } from './powertools-side.js';

export function floorHandler(client: DynamoDBClient, table: string): (event: SqsEvent) => Promise<SqsBatchResponse> {
  const write = async (messageId: string) => {
    const Key = { [POWERTOOLS_KEY]: { S: `floor#${messageId}` } };
    const expires = { N: String(Math.floor(Date.now() / 1000) + 3_600) };
    await client.send(
      new PutItemCommand({
        TableName: table,
        Item: { ...Key, status: { S: 'INPROGRESS' }, expiration: expires },
        ConditionExpression: 'attribute_not_exists(#k)',
        ExpressionAttributeNames: { '#k': POWERTOOLS_KEY },
      }),
    );
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key,
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': { S: 'COMPLETED' } },
      }),
    );
  };
  return async (event) => {
    await Promise.all(event.Records.map((r) => write(r.messageId)));
    return { batchItemFailures: [] };
  };
}
