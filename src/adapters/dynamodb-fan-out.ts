import { TransactionCanceledException, TransactWriteItemsCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { ChildCount, ChildEnd, CompletionSpec, FanOutStatus } from '../ports/fan-out-store.js';
import { sleep } from '../core/sleep.js';
import { completionOf, fanOutOf, jobKey, N, readItem, S, type TableRef, Update, updateIf } from './dynamodb-items.js';

/** Tries of a child's count transaction that conflicts with another child's on the same parent. */
const CONFLICT_ATTEMPTS = 6;

/**
 * A fan-out's counters on its parent's record (`fan*` attributes), and a marker per counted child
 * (`child#<parent id>#<child id>`). See DynamoJobStore for the conditions that keep them exact.
 */
export async function openFanOut(
  t: TableRef,
  parentId: string,
  jobName: string,
  total: number,
  completion: CompletionSpec | undefined,
): Promise<FanOutStatus> {
  const u = new Update();
  if (completion !== undefined) u.set('fanCompletion', S(JSON.stringify(completion)), true);
  u.set('jobId', S(parentId), true)
    .set('jobName', S(jobName), true)
    .set('fanTotal', N(total), true)
    .set('fanSent', N(0), true)
    .set('fanDone', N(0), true)
    .set('fanSucceeded', N(0), true)
    .set('fanFailed', N(0), true)
    .set('expiresAt', N(t.expiresAt()))
    .set('updatedAt', S(new Date().toISOString()));
  const out = await t.client.send(
    new UpdateItemCommand({
      TableName: t.table,
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

/** Move the cursor of children sent, never backwards. */
export async function fanOutSent(t: TableRef, parentId: string, sent: number): Promise<void> {
  const u = new Update();
  u.set('fanSent', N(sent));
  await updateIf(t, jobKey(parentId), u, `${u.name('fanSent')} < ${u.value(N(sent))}`);
}

export async function childEnded(t: TableRef, end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount> {
  if ((await countOnce(t, end)) === 'no-fan-out') return { kind: 'no-fan-out' };
  const parent = (await readItem(t, jobKey(end.parentId))) ?? {};
  const status = fanOutOf(parent);
  if (status === undefined) return { kind: 'no-fan-out' };
  if (status.completionSent || status.succeeded + status.failed < status.total) return { kind: 'counted', status, completion: undefined };
  if (await claimCompletion(t, end.parentId, claimToken, reclaimAfterMs))
    return { kind: 'counted', status, completion: completionOf(parent) };
  return { kind: 'completion-pending', status };
}

export async function claimEmptyCompletion(
  t: TableRef,
  parentId: string,
  claimToken: string,
  reclaimAfterMs: number,
): Promise<CompletionSpec | undefined> {
  if (!(await claimCompletion(t, parentId, claimToken, reclaimAfterMs))) return undefined;
  return completionOf((await readItem(t, jobKey(parentId))) ?? {});
}

export async function completionSent(t: TableRef, parentId: string): Promise<void> {
  const u = new Update();
  u.set('fanCompletionSent', { BOOL: true }).set('updatedAt', S(new Date().toISOString()));
  // Only on a fan-out's record: never a stub (without a TTL) for a parent whose record expired.
  await updateIf(t, jobKey(parentId), u, `attribute_exists(${u.name('fanTotal')})`);
}

/**
 * The marker put (once per child id) and the parent's counters, in one transaction. A marker that
 * exists means counted before (a redelivery or a copy); a parent without a fan-out is answered as
 * such; a conflict with another child's transaction on the same parent is tried again.
 */
async function countOnce(t: TableRef, end: ChildEnd): Promise<'counted' | 'no-fan-out'> {
  const counter = new Update();
  counter.add('fanDone', 1).add(end.succeeded ? 'fanSucceeded' : 'fanFailed', 1);
  const parentHasFanOut = `attribute_exists(${counter.name('fanTotal')})`;
  for (let attempt = 1; ; attempt++) {
    try {
      await t.client.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            {
              Put: {
                TableName: t.table,
                Item: { pk: S(`child#${end.parentId}#${end.childId}`), succeeded: { BOOL: end.succeeded }, expiresAt: N(t.expiresAt()) },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
            {
              Update: {
                TableName: t.table,
                Key: jobKey(end.parentId),
                UpdateExpression: counter.expression,
                ConditionExpression: parentHasFanOut,
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

/** Claim the completion: the set is complete, not sent, and unclaimed, claimed with this token, or claimed before `reclaimAfterMs`. */
async function claimCompletion(t: TableRef, parentId: string, token: string, reclaimAfterMs: number): Promise<boolean> {
  const now = Date.now();
  const u = new Update();
  u.set('fanClaim', S(token)).set('fanClaimAt', N(now));
  const [done, total, sent, claim, claimAt] = ['fanDone', 'fanTotal', 'fanCompletionSent', 'fanClaim', 'fanClaimAt'].map((a) => u.name(a));
  const free = `attribute_not_exists(${claim}) OR ${claim} = ${u.value(S(token))} OR ${claimAt} < ${u.value(N(now - reclaimAfterMs))}`;
  return updateIf(t, jobKey(parentId), u, `${done} >= ${total} AND attribute_not_exists(${sent}) AND (${free})`);
}
