import { DeleteItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { conditional, type Item, type TableRef } from './dynamodb-items.js';
import { DUE_INDEX } from '../core/due-index.js';

/*
 * What schedules and kept jobs share in the job store's table: the due index (`schedules-due`,
 * partition `schedShard`, sort `schedDue`), read a page at a time; the page cursor handed out as
 * opaque text; and the conditional put and delete their items are made and taken away with.
 */

/** A page's position, as opaque text, and back. */
export const toCursor = (at: unknown): string => Buffer.from(JSON.stringify(at)).toString('base64url');
export const fromCursor = <T>(text: string): T => JSON.parse(Buffer.from(text, 'base64url').toString()) as T;

/** One page of the due index's partition `shard` where `schedDue` meets `due` (an expression on it, with `values`); eventually consistent. */
export async function duePage(
  t: TableRef,
  shard: string,
  due: string,
  values: Item,
  limit: number,
  start: Item | undefined,
): Promise<{ items: Item[]; last: Item | undefined }> {
  const answer = await t.client.send(
    new QueryCommand({
      TableName: t.table,
      IndexName: DUE_INDEX.name,
      KeyConditionExpression: `${DUE_INDEX.partitionKey} = :shard AND ${due}`,
      ExpressionAttributeValues: { ':shard': { S: shard }, ...values },
      Limit: limit,
      ...(start === undefined ? {} : { ExclusiveStartKey: start }),
    }),
  );
  return { items: answer.Items ?? [], last: answer.LastEvaluatedKey };
}

/** Put `item` where no item has its key: false when one has. */
export async function putIfAbsent(t: TableRef, item: Item): Promise<boolean> {
  return conditional(() =>
    t.client.send(new PutItemCommand({ TableName: t.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' })),
  );
}

/** Delete the item at `key` when `condition` holds (with its names and values): false when it did not. */
export async function deleteIf(t: TableRef, key: Item, condition: string, values?: Item, names?: Record<string, string>): Promise<boolean> {
  return conditional(() =>
    t.client.send(
      new DeleteItemCommand({
        TableName: t.table,
        Key: key,
        ConditionExpression: condition,
        ...(values === undefined ? {} : { ExpressionAttributeValues: values }),
        ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
      }),
    ),
  );
}
