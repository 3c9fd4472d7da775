import {
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from '../aws/clients.js';
import type { AwsSettings, Env } from '../config.js';
import { sleep } from '../sleep.js';
import {
  type ChildCount,
  type ChildEnd,
  type CompletionSpec,
  type FanOutStatus,
  type JobStatus,
  type JobStore,
  type ProgressUpdate,
  STATE_RANK,
  type Transition,
} from '../ports/job-store.js';
import { completionOf, fanOutOf, jobKey, N, S, smallJson, toStatus, Update } from './dynamodb-items.js';

export { createJobTable } from './dynamodb-table.js';
export { MAX_JSON_BYTES } from './dynamodb-items.js';

/** A DynamoJobStore with its own client (closed with the store). */
export function createDynamoJobStore(aws: AwsSettings, table: string, ttlSeconds: number, env: Env): DynamoJobStore {
  return new DynamoJobStore({
    client: createDynamoClient(aws, { maxSockets: 50, requestTimeoutMs: 10_000 }, env),
    table,
    ttlSeconds,
    ownsClient: true,
  });
}

export interface DynamoJobStoreOptions {
  readonly client: DynamoDBClient;
  readonly table: string;
  /** How long records and child markers live after their last write (the table's TTL attribute `expiresAt`). */
  readonly ttlSeconds: number;
  /** Close the client on close() (when the store made it). */
  readonly ownsClient?: boolean;
}

/** Tries of a child's count transaction that conflicts with another child's on the same parent. */
const CONFLICT_ATTEMPTS = 6;

/**
 * The job store on DynamoDB: one on-demand table, partition key `pk` (string), TTL attribute
 * `expiresAt`. A job's record is `job#<job id>`; a fan-out child's counted end is
 * `child#<parent id>#<child id>`. Order and idempotence are in the condition expressions:
 * - transition: applies when nothing is stored, or the stored state is not `completed` and the new
 *   one is `completed`, or later by (attempt, rank);
 * - progress: only while not `completed`, and `done` never goes down;
 * - childEnded: the marker put and the parent's counters in one transaction, so a child counts once;
 *   the completion is claimed with a conditional write (done = total, not sent, not claimed or
 *   claimed by a claimer presumed dead).
 */
export class DynamoJobStore implements JobStore {
  readonly #o: DynamoJobStoreOptions;

  constructor(options: DynamoJobStoreOptions) {
    this.#o = options;
  }

  async transition(t: Transition): Promise<'applied' | 'stale'> {
    const u = new Update();
    const at = t.at.toISOString();
    u.set('jobId', S(t.jobId))
      .set('jobName', S(t.jobName))
      .set('state', S(t.state))
      .set('rank', N(STATE_RANK[t.state]))
      .set('attempt', N(t.attempt))
      .set('updatedAt', S(at))
      .set('expiresAt', N(this.#expiresAt()))
      .set('enqueuedAt', t.enqueuedAt === undefined ? undefined : S(t.enqueuedAt), true)
      .set('parentId', t.parentId === undefined ? undefined : S(t.parentId), true)
      .set('worker', t.worker === undefined ? undefined : S(t.worker))
      .set('error', t.error === undefined ? undefined : S(t.error.slice(0, 1_000)))
      .set('reason', t.reason === undefined ? undefined : S(t.reason))
      .set('nextAttemptAt', t.nextAttemptAt === undefined ? undefined : S(t.nextAttemptAt.toISOString()));
    if (t.state === 'running') u.set('startedAt', S((t.startedAt ?? t.at).toISOString()));
    else if (t.startedAt !== undefined && t.state !== 'waiting') u.set('startedAt', S(t.startedAt.toISOString()));
    if (t.state === 'completed' || t.state === 'failed') u.set('finishedAt', S(at));
    const result = smallJson(t.result);
    if (result !== undefined) u.set('result', S(result));
    const state = u.name('state');
    const attempt = u.name('attempt');
    const rank = u.name('rank');
    const completed = u.value(S('completed'));
    const later = () => {
      const a = u.value(N(t.attempt));
      return `${attempt} < ${a} OR (${attempt} = ${a} AND ${rank} < ${u.value(N(STATE_RANK[t.state]))})`;
    };
    const wins = t.state === 'completed' ? `${state} <> ${completed}` : `${state} <> ${completed} AND (${later()})`;
    try {
      await this.#o.client.send(
        new UpdateItemCommand({
          TableName: this.#o.table,
          Key: jobKey(t.jobId),
          UpdateExpression: u.expression,
          ConditionExpression: `attribute_not_exists(${state}) OR (${wins})`,
          ExpressionAttributeNames: u.names,
          ExpressionAttributeValues: u.values,
        }),
      );
      return 'applied';
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return 'stale';
      throw error;
    }
  }

  async progress(jobId: string, p: ProgressUpdate): Promise<void> {
    const u = new Update();
    u.set('updatedAt', S(new Date().toISOString()));
    if (p.done !== undefined) u.set('progressDone', N(p.done));
    if (p.add !== undefined && p.add !== 0) u.add('progressDone', p.add);
    if (p.total !== undefined) u.set('progressTotal', N(p.total));
    const data = smallJson(p.data);
    if (data !== undefined) u.set('data', S(data));
    const state = u.name('state');
    const completed = u.value(S('completed'));
    const conditions = [`${state} <> ${completed}`];
    if (p.done !== undefined) {
      const done = u.name('progressDone');
      conditions.push(`(attribute_not_exists(${done}) OR ${done} <= ${u.value(N(p.done))})`);
    }
    try {
      await this.#o.client.send(
        new UpdateItemCommand({
          TableName: this.#o.table,
          Key: jobKey(jobId),
          UpdateExpression: u.expression,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: u.names,
          ExpressionAttributeValues: u.values,
        }),
      );
    } catch (error) {
      // Completed already, not recorded yet, or a later progress is stored: nothing to change.
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async get(jobId: string): Promise<JobStatus | undefined> {
    const out = await this.#o.client.send(new GetItemCommand({ TableName: this.#o.table, Key: jobKey(jobId), ConsistentRead: true }));
    return out.Item === undefined ? undefined : toStatus(out.Item);
  }

  async openFanOut(parentId: string, jobName: string, total: number, completion: CompletionSpec | undefined): Promise<FanOutStatus> {
    const u = new Update();
    if (completion !== undefined) u.set('fanCompletion', S(JSON.stringify(completion)), true);
    u.set('jobId', S(parentId), true)
      .set('jobName', S(jobName), true)
      .set('fanTotal', N(total), true)
      .set('fanSent', N(0), true)
      .set('fanDone', N(0), true)
      .set('fanSucceeded', N(0), true)
      .set('fanFailed', N(0), true)
      .set('expiresAt', N(this.#expiresAt()))
      .set('updatedAt', S(new Date().toISOString()));
    const out = await this.#o.client.send(
      new UpdateItemCommand({
        TableName: this.#o.table,
        Key: jobKey(parentId),
        UpdateExpression: u.expression,
        ExpressionAttributeNames: u.names,
        ExpressionAttributeValues: u.values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    const status = fanOutOf(out.Attributes ?? {});
    if (status === undefined || status.total !== total) {
      throw new Error(`fan-out ${parentId} was opened with ${status?.total} children; it cannot be resumed with ${total}`);
    }
    return status;
  }

  async fanOutSent(parentId: string, sent: number): Promise<void> {
    const u = new Update();
    u.set('fanSent', N(sent));
    try {
      await this.#o.client.send(
        new UpdateItemCommand({
          TableName: this.#o.table,
          Key: jobKey(parentId),
          UpdateExpression: u.expression,
          ConditionExpression: `${u.name('fanSent')} < ${u.value(N(sent))}`,
          ExpressionAttributeNames: u.names,
          ExpressionAttributeValues: u.values,
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }

  async childEnded(end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount> {
    const counter = new Update();
    counter.add('fanDone', 1).add(end.succeeded ? 'fanSucceeded' : 'fanFailed', 1);
    const counted = await this.#countOnce(end, counter);
    if (counted === 'no-fan-out') return { kind: 'no-fan-out' };
    const parent = await this.#o.client.send(
      new GetItemCommand({ TableName: this.#o.table, Key: jobKey(end.parentId), ConsistentRead: true }),
    );
    const status = fanOutOf(parent.Item ?? {});
    if (status === undefined) return { kind: 'no-fan-out' };
    if (status.completionSent || status.succeeded + status.failed < status.total) return { kind: 'counted', status, completion: undefined };
    if (await this.#claimCompletion(end.parentId, claimToken, reclaimAfterMs)) {
      return { kind: 'counted', status, completion: completionOf(parent.Item ?? {}) };
    }
    return { kind: 'completion-pending', status };
  }

  /**
   * The marker put (once per child id) and the parent's counters, in one transaction. A marker that
   * exists means counted before (a redelivery or a copy); a parent without a fan-out is answered as
   * such; a conflict with another child's transaction on the same parent is tried again.
   */
  async #countOnce(end: ChildEnd, counter: Update): Promise<'counted' | 'no-fan-out'> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#o.client.send(
          new TransactWriteItemsCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.#o.table,
                  Item: {
                    pk: S(`child#${end.parentId}#${end.childId}`),
                    succeeded: { BOOL: end.succeeded },
                    expiresAt: N(this.#expiresAt()),
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Update: {
                  TableName: this.#o.table,
                  Key: jobKey(end.parentId),
                  UpdateExpression: counter.expression,
                  ConditionExpression: `attribute_exists(${counter.name('fanTotal')})`,
                  ExpressionAttributeNames: counter.names,
                  ExpressionAttributeValues: counter.values,
                },
              },
            ],
          }),
        );
        return 'counted';
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const [marker, parent] = (error.CancellationReasons ?? []).map((r) => r.Code);
        if (parent === 'ConditionalCheckFailed') return 'no-fan-out';
        if (marker === 'ConditionalCheckFailed') return 'counted';
        const conflict = marker === 'TransactionConflict' || parent === 'TransactionConflict';
        if (!conflict || attempt >= CONFLICT_ATTEMPTS) throw error;
        await sleep(Math.random() * 50 * 2 ** attempt);
      }
    }
  }

  async claimEmptyCompletion(parentId: string, claimToken: string, reclaimAfterMs: number): Promise<CompletionSpec | undefined> {
    if (!(await this.#claimCompletion(parentId, claimToken, reclaimAfterMs))) return undefined;
    const parent = await this.#o.client.send(new GetItemCommand({ TableName: this.#o.table, Key: jobKey(parentId), ConsistentRead: true }));
    return completionOf(parent.Item ?? {});
  }

  async completionSent(parentId: string): Promise<void> {
    const u = new Update();
    u.set('fanCompletionSent', { BOOL: true }).set('updatedAt', S(new Date().toISOString()));
    await this.#o.client.send(
      new UpdateItemCommand({
        TableName: this.#o.table,
        Key: jobKey(parentId),
        UpdateExpression: u.expression,
        ExpressionAttributeNames: u.names,
        ExpressionAttributeValues: u.values,
      }),
    );
  }

  close(): void {
    if (this.#o.ownsClient) this.#o.client.destroy();
  }

  async #claimCompletion(parentId: string, token: string, reclaimAfterMs: number): Promise<boolean> {
    const now = Date.now();
    const u = new Update();
    u.set('fanClaim', S(token)).set('fanClaimAt', N(now));
    const done = u.name('fanDone');
    const total = u.name('fanTotal');
    const sent = u.name('fanCompletionSent');
    const claim = u.name('fanClaim');
    const claimAt = u.name('fanClaimAt');
    try {
      await this.#o.client.send(
        new UpdateItemCommand({
          TableName: this.#o.table,
          Key: jobKey(parentId),
          UpdateExpression: u.expression,
          ConditionExpression: `${done} >= ${total} AND attribute_not_exists(${sent}) AND (attribute_not_exists(${claim}) OR ${claim} = ${u.value(S(token))} OR ${claimAt} < ${u.value(N(now - reclaimAfterMs))})`,
          ExpressionAttributeNames: u.names,
          ExpressionAttributeValues: u.values,
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }

  #expiresAt(): number {
    return Math.floor(Date.now() / 1000) + this.#o.ttlSeconds;
  }
}
