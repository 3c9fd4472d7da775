import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { ChildCount, ChildEnd, CompletionSpec, FanOutStatus } from '../ports/fan-out-store.js';
import type { ChildCounts } from './dynamodb-child-counts.js';
import { completionOf, fanOutOf, jobKey, N, readItem, S, type TableRef, Update, updateIf } from './dynamodb-items.js';

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

/**
 * Count a child (ChildCounts: most children need no read), then, for the child whose count may
 * have completed the set or that was counted before, read the parent and claim the completion.
 */
export async function childEnded(
  t: TableRef,
  counts: ChildCounts,
  end: ChildEnd,
  claimToken: string,
  reclaimAfterMs: number,
): Promise<ChildCount> {
  const counted = await counts.count(end);
  if (counted === 'no-fan-out') return { kind: 'no-fan-out' };
  if (counted === 'counted') return { kind: 'counted', status: undefined, completion: undefined };
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

/** Claim the completion: the set is complete, not sent, and unclaimed, claimed with this token, or claimed before `reclaimAfterMs`. */
async function claimCompletion(t: TableRef, parentId: string, token: string, reclaimAfterMs: number): Promise<boolean> {
  const now = Date.now();
  const u = new Update();
  u.set('fanClaim', S(token)).set('fanClaimAt', N(now));
  const [done, total, sent, claim, claimAt] = ['fanDone', 'fanTotal', 'fanCompletionSent', 'fanClaim', 'fanClaimAt'].map((a) => u.name(a));
  const free = `attribute_not_exists(${claim}) OR ${claim} = ${u.value(S(token))} OR ${claimAt} < ${u.value(N(now - reclaimAfterMs))}`;
  return updateIf(t, jobKey(parentId), u, `${done} >= ${total} AND attribute_not_exists(${sent}) AND (${free})`);
}
