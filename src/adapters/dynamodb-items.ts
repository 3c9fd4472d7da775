import {
  type AttributeValue,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type JobState, type JobStatus, viewOf } from '../ports/status-store.js';
import type { CompletionSpec, FanOutStatus } from '../ports/fan-out-store.js';

// The job store's items in DynamoDB's terms: the key of a job's record, the expression builder of
// an UpdateItem and the conditional write it makes, and the mapping of a stored item back to a JobStatus.

export type Item = Record<string, AttributeValue>;

export const S = (s: string): AttributeValue => ({ S: s });
export const N = (n: number): AttributeValue => ({ N: String(n) });
export const jobKey = (jobId: string): Item => ({ pk: S(`job#${jobId}`) });

/** Builds one UpdateItem's expression: SET, ADD and REMOVE clauses with placeholder names and values. */
export class Update {
  readonly names: Record<string, string> = {};
  readonly values: Item = {};
  readonly #set: string[] = [];
  readonly #add: string[] = [];
  readonly #remove: string[] = [];
  #n = 0;

  name(attribute: string): string {
    const key = `#${attribute}`;
    this.names[key] = attribute;
    return key;
  }

  value(v: AttributeValue): string {
    const key = `:v${this.#n++}`;
    this.values[key] = v;
    return key;
  }

  set(attribute: string, v: AttributeValue | undefined, ifMissing = false): this {
    if (v === undefined) return this;
    const n = this.name(attribute);
    this.#set.push(ifMissing ? `${n} = if_not_exists(${n}, ${this.value(v)})` : `${n} = ${this.value(v)}`);
    return this;
  }

  add(attribute: string, by: number): this {
    this.#add.push(`${this.name(attribute)} ${this.value(N(by))}`);
    return this;
  }

  remove(attribute: string): this {
    this.#remove.push(this.name(attribute));
    return this;
  }

  get expression(): string {
    return [
      this.#set.length ? `SET ${this.#set.join(', ')}` : '',
      this.#add.length ? `ADD ${this.#add.join(', ')}` : '',
      this.#remove.length ? `REMOVE ${this.#remove.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
  }
}

const str = (item: Item, name: string) => item[name]?.S;
const num = (item: Item, name: string) => (item[name]?.N === undefined ? undefined : Number(item[name].N));

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The completion spec stored with a fan-out; one with no completion job answers a spec with job '' (nothing to send). */
export function completionOf(item: Item): CompletionSpec {
  const parsed = parseJson(str(item, 'fanCompletion')) as CompletionSpec | undefined;
  return parsed ?? { job: '', queueUrl: '' };
}

export function fanOutOf(item: Item): FanOutStatus | undefined {
  const total = num(item, 'fanTotal');
  if (total === undefined) return undefined;
  return {
    total,
    sent: num(item, 'fanSent') ?? 0,
    succeeded: num(item, 'fanSucceeded') ?? 0,
    failed: num(item, 'fanFailed') ?? 0,
    completionSent: item.fanCompletionSent?.BOOL === true,
  };
}

export function toStatus(item: Item): JobStatus | undefined {
  const jobId = str(item, 'jobId');
  if (jobId === undefined) return undefined;
  const done = num(item, 'progressDone');
  const total = num(item, 'progressTotal');
  const fanOut = fanOutOf(item);
  const view = viewOf(
    str(item, 'state') as JobState | undefined,
    done === undefined && total === undefined ? undefined : { done: done ?? 0, ...(total === undefined ? {} : { total }) },
    fanOut,
    str(item, 'nextAttemptAt'),
  );
  const optional = {
    enqueuedAt: str(item, 'enqueuedAt'),
    startedAt: str(item, 'startedAt'),
    finishedAt: str(item, 'finishedAt'),
    worker: str(item, 'worker'),
    error: str(item, 'error'),
    reason: str(item, 'reason'),
    nextAttemptAt: str(item, 'nextAttemptAt'),
    result: parseJson(str(item, 'result')),
    data: parseJson(str(item, 'data')),
    parentId: str(item, 'parentId'),
    tenant: str(item, 'tenant'),
    progress: view.progress,
    fanOut,
  };
  return {
    jobId,
    jobName: str(item, 'jobName') ?? 'unknown',
    state: view.state,
    attempt: num(item, 'attempt') ?? 0,
    updatedAt: str(item, 'updatedAt') ?? '',
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}

/** The table a store works on, and when an item written now expires (its TTL attribute). */
export interface TableRef {
  readonly client: DynamoDBClient;
  readonly table: string;
  readonly expiresAt: () => number;
}

/** One UpdateItem built by `u`, under `condition` when given: false when the condition did not hold. */
export async function updateIf(t: TableRef, key: Item, u: Update, condition?: string): Promise<boolean> {
  return (await update(t, key, u, condition, 'NONE')) !== undefined;
}

/** updateIf, answering the item as written (undefined when the condition failed). */
export function updateReturning(t: TableRef, key: Item, u: Update, condition?: string): Promise<Item | undefined> {
  return update(t, key, u, condition, 'ALL_NEW');
}

async function update(
  t: TableRef,
  key: Item,
  u: Update,
  condition: string | undefined,
  returns: 'NONE' | 'ALL_NEW',
): Promise<Item | undefined> {
  try {
    const answer = await t.client.send(
      new UpdateItemCommand({
        TableName: t.table,
        Key: key,
        UpdateExpression: u.expression,
        ...(condition === undefined ? {} : { ConditionExpression: condition }),
        ExpressionAttributeNames: u.names,
        // DynamoDB refuses an empty map: an update that only removes has no values.
        ...(Object.keys(u.values).length === 0 ? {} : { ExpressionAttributeValues: u.values }),
        ...(returns === 'NONE' ? {} : { ReturnValues: returns }),
      }),
    );
    return answer.Attributes ?? {};
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** An item, read consistently. */
export async function readItem(t: TableRef, key: Item): Promise<Item | undefined> {
  return (await t.client.send(new GetItemCommand({ TableName: t.table, Key: key, ConsistentRead: true }))).Item;
}

/** Make a conditional call: false when its condition refused it (ConditionalCheckFailed); other errors are thrown. */
export async function conditional(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
