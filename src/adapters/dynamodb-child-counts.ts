import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import type { ChildEnd } from '../ports/fan-out-store.js';
import { GroupCommit } from '../core/group-commit.js';
import { sleep } from '../core/sleep.js';
import { fanOutOf, jobKey, N, readItem, S, type TableRef, Update } from './dynamodb-items.js';

/** Tries of a count transaction that conflicts with another worker's on the same parent (or is throttled). */
const CONFLICT_ATTEMPTS = 6;

/** Child markers in one transaction: DynamoDB takes 100 actions, one of them the parent's counters. */
const MAX_CHILDREN_PER_COMMIT = 99;

/** Fan-out totals remembered (a total never changes once opened); the oldest is forgotten past this. */
const TOTALS_KEPT = 10_000;

/**
 * What counting answered for one child:
 * - counted: counted now, and the set is not complete after it: nothing more to do;
 * - check: counted now by a commit that may have completed the set, or counted before (a copy or
 *   a redelivery, whose completion may be its own to send again): read the parent and claim;
 * - no-fan-out: the parent has no fan-out record.
 */
type ChildCountResult = 'counted' | 'check' | 'no-fan-out';

/**
 * Fan-out children counted on DynamoDB by group commit, per parent: one count transaction in
 * flight per parent in this process, and the children that end meanwhile go together in the next
 * (a marker put per child, once per child id, and one update of the parent's counters). Children
 * of one parent in one worker never conflict with each other, and a busy fan-out costs well under
 * one transaction per child.
 *
 * The parent's update also asks that the set stay incomplete after it (fanDone below the total
 * less the commit's children; the total is read once per parent and remembered), so a commit that
 * leaves the set incomplete needs no read after it. One that would complete it is refused and
 * made again without that ask; its last child then reads the parent and claims the completion.
 */
export class ChildCounts {
  readonly #t: TableRef;
  /** Per parent with children being counted: its group commit (forgotten once idle). */
  readonly #groups = new Map<string, GroupCommit<ChildEnd, ChildCountResult>>();
  readonly #totals = new Map<string, number>();

  constructor(t: TableRef) {
    this.#t = t;
  }

  count(end: ChildEnd): Promise<ChildCountResult> {
    const { parentId } = end;
    let group = this.#groups.get(parentId);
    if (group === undefined) {
      group = new GroupCommit((ends) => this.#commit(parentId, ends), {
        maxItems: MAX_CHILDREN_PER_COMMIT,
        maxInFlight: 1,
        keyOf: (e) => e.childId,
        onIdle: () => this.#groups.delete(parentId),
      });
      this.#groups.set(parentId, group);
    }
    return group.add(end);
  }

  /** Count `ends` (distinct children of one parent): each one's result, in order. */
  async #commit(parentId: string, ends: readonly ChildEnd[]): Promise<ChildCountResult[]> {
    const results = new Map<ChildEnd, ChildCountResult>();
    const total = await this.#total(parentId);
    if (total === undefined) return ends.map(() => 'no-fan-out');
    let left = [...ends];
    let incomplete = true;
    for (let attempt = 1; left.length > 0; ) {
      try {
        await this.#t.client.send(
          new TransactWriteItemsCommand({ TransactItems: this.#actions(parentId, left, incomplete ? total : undefined) }),
        );
        // Refused as complete once: the last child of this commit checks (reads, claims) for all of them.
        for (const [i, end] of left.entries()) results.set(end, incomplete || i < left.length - 1 ? 'counted' : 'check');
        break;
      } catch (error) {
        if (!(error instanceof TransactionCanceledException)) throw error;
        const codes = (error.CancellationReasons ?? []).map((r) => r.Code);
        const before = left.filter((_, i) => codes[i] === 'ConditionalCheckFailed');
        if (before.length > 0) {
          for (const end of before) results.set(end, 'check'); // counted before: a copy, or a redelivery
          left = left.filter((end) => !before.includes(end));
        } else if (codes[left.length] === 'ConditionalCheckFailed') {
          if (!incomplete) {
            for (const end of left) results.set(end, 'no-fan-out');
            break;
          }
          incomplete = false; // this commit completes the set (or the parent lost its fan-out): count without the ask
          this.#totals.delete(parentId);
        } else if ((codes.includes('TransactionConflict') || codes.includes('ThrottlingError')) && attempt < CONFLICT_ATTEMPTS) {
          await sleep(Math.random() * 50 * 2 ** attempt++);
        } else {
          throw error;
        }
      }
    }
    return ends.map((end) => results.get(end)!);
  }

  /** The transaction: a marker per child (absent before), then the parent's counters (given `total`: only if fanDone stays below total − children). */
  #actions(parentId: string, ends: readonly ChildEnd[], total: number | undefined) {
    const expiresAt = N(this.#t.expiresAt());
    const markers = ends.map((end) => ({
      Put: {
        TableName: this.#t.table,
        Item: { pk: S(`child#${parentId}#${end.childId}`), succeeded: { BOOL: end.succeeded }, expiresAt },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    }));
    const succeeded = ends.filter((e) => e.succeeded).length;
    const counter = new Update();
    counter.add('fanDone', ends.length);
    if (succeeded > 0) counter.add('fanSucceeded', succeeded);
    if (succeeded < ends.length) counter.add('fanFailed', ends.length - succeeded);
    const fanTotal = counter.name('fanTotal');
    const hasFanOut = `attribute_exists(${fanTotal})`;
    // The total as remembered, checked: a parent reopened (after its record expired) with another total is refused, and read again.
    const condition =
      total === undefined
        ? hasFanOut
        : `${fanTotal} = ${counter.value(N(total))} AND ${counter.name('fanDone')} < ${counter.value(N(total - ends.length))}`;
    const parent = {
      Update: {
        TableName: this.#t.table,
        Key: jobKey(parentId),
        UpdateExpression: counter.expression,
        ConditionExpression: condition,
        ExpressionAttributeNames: counter.names,
        ExpressionAttributeValues: counter.values,
      },
    };
    return [...markers, parent];
  }

  /** The fan-out's total, read once per parent (undefined: the parent has no fan-out record). */
  async #total(parentId: string): Promise<number | undefined> {
    const known = this.#totals.get(parentId);
    if (known !== undefined) return known;
    const total = fanOutOf((await readItem(this.#t, jobKey(parentId))) ?? {})?.total;
    if (total === undefined) return undefined;
    if (this.#totals.size >= TOTALS_KEPT) this.#totals.delete(this.#totals.keys().next().value!);
    this.#totals.set(parentId, total);
    return total;
  }
}
