import {
  ConditionalCheckFailedException,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { BurstUpdate, EnqueueKeys, KeyRecord } from '../ports/enqueue-keys.js';
import type { TimedJob } from '../ports/timed-jobs.js';
import { type Item, N, readItem, S, type TableRef } from './dynamodb-items.js';
import { deleteIf } from './dynamodb-due-index.js';
import { attributesText, timedItem, timedKey } from './dynamodb-timed.js';

/*
 * Keys on enqueue in the job store's table: `key#<rule>#<job>#<key>` holding the job that has it
 * (`jobId`, `sinceMs`, a throttle's `untilMs`). Each decision is one conditional write; a refused
 * one answers the record in force in the same call (ReturnValuesOnConditionCheckFailure). A key
 * expires with the table's TTL like a job's record, counted from its `keepUntilMs` when later (a
 * throttle's a day after its window).
 */

const key = (id: string): Item => ({ pk: S(`key#${id}`) });
const DAY_S = 86_400;
/** A transaction's cancellation reasons that mean "read the key again": a condition, or a write racing it. */
const RACED: ReadonlySet<string> = new Set(['None', 'ConditionalCheckFailed', 'TransactionConflict']);
/** Free for a new holder: nobody, the same job (a retry), the holder the caller judged done, or a window that ended. */
const FREE = 'attribute_not_exists(pk) OR jobId = :mine OR jobId = :holder OR untilMs <= :now';

export class DynamoEnqueueKeys implements EnqueueKeys {
  readonly #t: TableRef;

  constructor(table: TableRef) {
    this.#t = table;
  }

  async readKey(id: string): Promise<KeyRecord | undefined> {
    const item = await readItem(this.#t, key(id));
    return item === undefined ? undefined : recordOf(item);
  }

  async takeKey(id: string, record: KeyRecord, free: { holder?: string; nowMs: number }): Promise<KeyRecord | undefined> {
    try {
      await this.#t.client.send(
        new PutItemCommand({
          TableName: this.#t.table,
          Item: this.#item(id, record),
          ConditionExpression: FREE,
          ExpressionAttributeValues: this.#freeValues(record.jobId, free.holder, free.nowMs),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return undefined;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // The record in force came back with the refusal: no second read.
      if (error.Item !== undefined) return recordOf(error.Item);
      return (await this.readKey(id)) ?? this.takeKey(id, record, free); // gone meanwhile: try again
    }
  }

  async releaseKey(id: string, jobId: string): Promise<void> {
    await deleteIf(this.#t, key(id), 'jobId = :mine', { ':mine': S(jobId) });
  }

  async openBurst(id: string, record: KeyRecord, job: TimedJob, holder: string | undefined): Promise<boolean> {
    try {
      await this.#t.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: this.#t.table,
                Item: this.#item(id, record),
                ConditionExpression: 'attribute_not_exists(pk) OR jobId = :holder',
                ExpressionAttributeValues: { ':holder': S(holder ?? '') },
              },
            },
            {
              Put: {
                TableName: this.#t.table,
                Item: timedItem({ ...job, debounced: true }),
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return true;
    } catch (error) {
      // Refused by a condition (another producer moved the key, or kept the job), or by a write
      // racing it: the caller reads the key again. Anything else (throttling, a bad request) is thrown.
      const reasons = error instanceof TransactionCanceledException ? (error.CancellationReasons ?? []) : undefined;
      if (reasons?.every((r) => r.Code === undefined || RACED.has(r.Code))) return false;
      throw error;
    }
  }

  async extendBurst(jobId: string, burst: BurstUpdate): Promise<'extended' | 'closed' | 'later'> {
    const { message, queueUrl, dueMs } = burst;
    const sets = ['body = :body', 'attrs = :attrs', 'queueUrl = :queue', 'dueMs = :due', 'schedDue = :dueS'];
    try {
      await this.#t.client.send(
        new UpdateItemCommand({
          TableName: this.#t.table,
          Key: timedKey(jobId),
          UpdateExpression: `SET ${[...sets, ...(message.groupId === undefined ? [] : ['groupId = :group'])].join(', ')}${message.groupId === undefined ? ' REMOVE groupId' : ''}`,
          // Never claimed (a claim is never taken back), and not due later already.
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(claimBy) AND dueMs <= :due',
          ExpressionAttributeValues: {
            ':body': S(message.body),
            ':attrs': S(attributesText(message.attributes)),
            ':queue': S(queueUrl),
            ':due': N(dueMs),
            ':dueS': N(Math.floor(dueMs / 1000)),
            ...(message.groupId === undefined ? {} : { ':group': S(message.groupId) }),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return 'extended';
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item;
      return old === undefined || old.claimBy !== undefined ? 'closed' : 'later';
    }
  }

  #item(id: string, r: KeyRecord): Item {
    const ttlS = this.#t.expiresAt() - Math.floor(Date.now() / 1000);
    const expiresAt =
      r.untilMs !== undefined ? Math.ceil(r.untilMs / 1000) + DAY_S : Math.ceil(Math.max(Date.now(), r.keepUntilMs ?? 0) / 1000) + ttlS;
    return {
      ...key(id),
      kind: S('key'),
      jobId: S(r.jobId),
      sinceMs: N(r.sinceMs),
      ...(r.untilMs === undefined ? {} : { untilMs: N(r.untilMs) }),
      ...(r.keepUntilMs === undefined ? {} : { keepUntilMs: N(r.keepUntilMs) }),
      expiresAt: N(expiresAt),
    };
  }

  #freeValues(mine: string, holder: string | undefined, nowMs: number): Item {
    return { ':mine': S(mine), ':holder': S(holder ?? mine), ':now': N(nowMs) };
  }
}

function recordOf(item: Item): KeyRecord {
  return {
    jobId: item.jobId?.S ?? '',
    sinceMs: Number(item.sinceMs?.N ?? 0),
    ...(item.untilMs?.N === undefined ? {} : { untilMs: Number(item.untilMs.N) }),
    ...(item.keepUntilMs?.N === undefined ? {} : { keepUntilMs: Number(item.keepUntilMs.N) }),
  };
}
