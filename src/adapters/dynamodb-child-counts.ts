import { TransactionCanceledException, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import type { ChildEnd } from '../ports/fan-out-store.js';
import { sleep } from '../core/sleep.js';
import { fanOutOf, jobKey, N, readItem, S, type TableRef, Update } from './dynamodb-items.js';

/** Tries of a count transaction that conflicts with another worker's on the same parent. */
const CONFLICT_ATTEMPTS = 6;

/** Child markers in one transaction: DynamoDB takes 100 actions, one of them the parent's counters. */
export const MAX_CHILDREN_PER_COMMIT = 99;

/** Fan-out totals remembered (a total never changes once opened); the oldest is forgotten past this. */
const TOTALS_KEPT = 10_000;

/**
 * What counting answered for one child:
 * - counted: counted now, and the set is not complete after it: nothing more to do;
 * - check: counted now by a commit that may have completed the set, or counted before (a copy or
 *   a redelivery, whose completion may be its own to send again): read the parent and claim;
 * - no-fan-out: the parent has no fan-out record.
 */
export type ChildCountResult = 'counted' | 'check' | 'no-fan-out';

interface Waiting {
  readonly end: ChildEnd;
  readonly resolve: (r: ChildCountResult) => void;
  readonly reject: (e: unknown) => void;
}

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
  readonly #waiting = new Map<string, Waiting[]>();
  readonly #totals = new Map<string, number>();

  constructor(t: TableRef) {
    this.#t = t;
  }

  count(end: ChildEnd): Promise<ChildCountResult> {
    return new Promise((resolve, reject) => {
      const queue = this.#waiting.get(end.parentId);
      if (queue !== undefined) {
        queue.push({ end, resolve, reject }); // the commit in flight takes it next
        return;
      }
      this.#waiting.set(end.parentId, [{ end, resolve, reject }]);
      void this.#drain(end.parentId);
    });
  }

  /** Commit the parent's waiting children, a group at a time, until none wait. */
  async #drain(parentId: string): Promise<void> {
    const queue = this.#waiting.get(parentId)!;
    while (queue.length > 0) {
      // Distinct child ids (one transaction cannot touch an item twice): a copy waits for the next group.
      const group: Waiting[] = [];
      const ids = new Set<string>();
      for (let i = 0; i < queue.length && group.length < MAX_CHILDREN_PER_COMMIT; ) {
        const w = queue[i]!;
        if (ids.has(w.end.childId)) {
          i++;
          continue;
        }
        ids.add(w.end.childId);
        group.push(w);
        queue.splice(i, 1);
      }
      try {
        const results = await this.#commit(
          parentId,
          group.map((w) => w.end),
        );
        for (const [i, w] of group.entries()) w.resolve(results[i]!);
      } catch (error) {
        for (const w of group) w.reject(error);
      }
    }
    this.#waiting.delete(parentId);
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
        } else if (codes.includes('TransactionConflict') && attempt < CONFLICT_ATTEMPTS) {
          await sleep(Math.random() * 50 * 2 ** attempt++);
        } else {
          throw error;
        }
      }
    }
    return ends.map((end) => results.get(end)!);
  }

  /** The transaction: a marker per child (absent before), then the parent's counters (under `limit`: fanDone stays below total − children). */
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
    const hasFanOut = `attribute_exists(${counter.name('fanTotal')})`;
    const condition =
      total === undefined ? hasFanOut : `${hasFanOut} AND ${counter.name('fanDone')} < ${counter.value(N(total - ends.length))}`;
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
