/**
 * Calls counted on the SDK clients, for bench/keys: a middleware in the `initialize` step (once per
 * command, before the SDK's retries) writes one Call a command into a log, with who made it
 * (producer, worker1, worker2), what it was made on, how it ended, and DynamoDB's capacity units.
 * A second middleware in the `deserialize` step counts attempts, so a retry is seen (none expected
 * on loopback). Scenarios read slices of the log between two marks.
 *
 * What a call was made on (`on`), from its input:
 * - DynamoDB item calls: the item's kind, its key's prefix (`key#…` a key, `timed#…` a kept job, a
 *   debounced burst's among them, `job#…` a job's record, `control…` the pauses), joined with `+`
 *   for a transaction's items;
 * - Query on the due index: the shard's family: `s0`-`s3` schedules, `t0`-`t3` kept jobs (read every
 *   10 s), `t4`-`t7` debounced bursts (read each second);
 * - SQS: the queue's name, and for ReceiveMessage whether it brought messages.
 *
 * Capacity: each DynamoDB call that can is asked `ReturnConsumedCapacity: 'INDEXES'`, and the units
 * DynamoDB Local answers (table and due index) are summed, except where DynamoDB Local is known to
 * be wrong or silent, where AWS's rule is applied to the request instead (`estimated`):
 * - TransactWriteItems: DynamoDB Local answers 4 table units whatever the number of items (probed:
 *   1, 2 and 3 small items all answer 4); AWS bills 2 units per item and 1 KB, and 2 per index write;
 * - a refused conditional write (ConditionalCheckFailed, a cancelled transaction) answers no
 *   capacity; AWS bills it as a write of the item (at least 1 unit; a transaction's as if written);
 * - a Query that returns nothing: DynamoDB Local answers 0, AWS bills at least 0.5 (one eventually
 *   consistent read), kept apart as `queryFloor`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { READS, WITH_CAPACITY } from '../schedules/counted.js';

export type Who = 'producer' | 'worker1' | 'worker2';

export interface Call {
  readonly who: Who;
  readonly service: 'dynamodb' | 'sqs';
  readonly op: string;
  /** What it was made on (see above). */
  readonly on: string;
  /** `ok`, `empty` (a Query or receive that found nothing), or the error's name. */
  readonly outcome: string;
  readonly read: number;
  readonly write: number;
  /** Units by AWS's rule, not DynamoDB Local's answer. */
  readonly estimated: boolean;
  readonly atMs: number;
}

const REFUSED = new Set(['ConditionalCheckFailedException', 'TransactionCanceledException']);

type AttributeValue = { S?: string; N?: string; BOOL?: boolean; NULL?: boolean; B?: Uint8Array; M?: Item; L?: AttributeValue[] };
type Item = Record<string, AttributeValue>;
type Input = Record<string, unknown> & {
  Key?: Item;
  Item?: Item;
  TableName?: string;
  IndexName?: string;
  ExpressionAttributeValues?: Item;
  QueueUrl?: string;
  TransactItems?: { Put?: { Item: Item }; Update?: { Key: Item }; Delete?: { Key: Item }; ConditionCheck?: { Key: Item } }[];
  Parameters?: AttributeValue[];
  Statements?: { Parameters?: AttributeValue[] }[];
};
type Capacity = {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
};

/** The family of an item by its key: `key`, `timed`, `job`, … */
const kindOf = (key: Item | undefined): string => {
  const pk = key?.pk?.S;
  if (pk === undefined) return '?';
  const cut = pk.search(/[#:]/);
  return cut < 0 ? pk : pk.slice(0, cut);
};

const shardFamily = (shard: string | undefined): string => {
  if (shard === undefined) return '?';
  const n = Number(shard.slice(1));
  if (shard.startsWith('s')) return 'schedules';
  if (shard.startsWith('t')) return n >= 4 ? 'debounced' : 'kept';
  return shard;
};

function onOf(service: 'dynamodb' | 'sqs', op: string, input: Input): string {
  if (service === 'sqs') return (input.QueueUrl ?? '').split('/').pop() ?? '?';
  if (op === 'Query') return `${input.IndexName ?? 'table'}:${shardFamily(input.ExpressionAttributeValues?.[':shard']?.S)}`;
  if (op === 'TransactWriteItems')
    return (input.TransactItems ?? []).map((t) => kindOf(t.Put?.Item ?? t.Update?.Key ?? t.Delete?.Key ?? t.ConditionCheck?.Key)).join('+');
  // PartiQL (the job store's status changes): the item's key is among the parameters.
  const keyIn = (ps: AttributeValue[] | undefined) => kindOf({ pk: ps?.find((p) => /^[a-z]+#/.test(p.S ?? '')) ?? {} });
  if (op === 'ExecuteStatement') return keyIn(input.Parameters);
  if (op === 'BatchExecuteStatement') return [...new Set((input.Statements ?? []).map((st) => keyIn(st.Parameters)))].join('+');
  return kindOf(input.Key ?? input.Item);
}

/** An item's size by DynamoDB's rule (names and values; a number about half its digits), in bytes. */
export function itemBytes(item: Item): number {
  let n = 0;
  for (const [name, v] of Object.entries(item)) n += Buffer.byteLength(name) + valueBytes(v);
  return n;
}
function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/[-.]/g, '').replace(/^0+/, '').length / 2) + 1;
  if (v.B !== undefined) return v.B.byteLength;
  if (v.M !== undefined) return 3 + itemBytes(v.M);
  if (v.L !== undefined) return 3 + v.L.reduce((a, x) => a + 1 + valueBytes(x), 0);
  return 1;
}
const writeUnits = (item: Item) => Math.max(1, Math.ceil(itemBytes(item) / 1024));
/** Whether an item lands in the due index (it carries both of its keys). */
const inDueIndex = (item: Item) => item.schedShard !== undefined && item.schedDue !== undefined;

/** AWS's units for a transaction: 2 per item and 1 KB, and 2 per index write (a Put's; an Update's or Delete's taken as 1 KB). */
function transactionUnits(input: Input): number {
  let units = 0;
  for (const t of input.TransactItems ?? []) {
    if (t.Put !== undefined) units += 2 * writeUnits(t.Put.Item) * (inDueIndex(t.Put.Item) ? 2 : 1);
    else if (t.ConditionCheck !== undefined) units += 1;
    else units += 2;
  }
  return units;
}

function unitsOf(c: Capacity | Capacity[] | undefined): number {
  const all = Array.isArray(c) ? c : c === undefined ? [] : [c];
  return all.reduce((n, x) => n + (x.CapacityUnits ?? 0), 0);
}

export class CallLog {
  readonly calls: Call[] = [];
  /** Per client tag (`producer/sqs`, …): commands started (initialize step) and attempts sent (deserialize step); a retry shows as more attempts. */
  readonly started = new Map<string, number>();
  readonly attempts = new Map<string, number>();

  mark(): number {
    return this.calls.length;
  }

  since(mark: number, until = this.calls.length): Call[] {
    return this.calls.slice(mark, until);
  }

  #count<C extends { middlewareStack: { add: (m: never, o: object) => void } }>(client: C, who: Who, service: 'dynamodb' | 'sqs'): C {
    const opOf = (context: { commandName?: string }) => (context.commandName ?? 'Unknown').replace(/Command$/, '');
    const tag = `${who}/${service}`;
    const counting =
      (next: (args: { input: Input }) => Promise<{ output: Record<string, unknown> }>, context: { commandName?: string }) =>
      async (args: { input: Input }) => {
        const op = opOf(context);
        this.started.set(tag, (this.started.get(tag) ?? 0) + 1);
        const asks = service === 'dynamodb' && WITH_CAPACITY.has(op);
        const input = asks ? { ...args.input, ReturnConsumedCapacity: 'INDEXES' } : args.input;
        const on = onOf(service, op, input);
        const record = (outcome: string, read: number, write: number, estimated: boolean) =>
          this.calls.push({ who, service, op, on, outcome, read, write, estimated, atMs: Date.now() });
        try {
          const out = await next({ ...args, input });
          const o = out.output;
          if (service === 'sqs') {
            const empty = op === 'ReceiveMessage' && ((o.Messages as unknown[] | undefined)?.length ?? 0) === 0;
            record(empty ? 'empty' : 'ok', 0, 0, false);
          } else if (op === 'TransactWriteItems') {
            record('ok', 0, transactionUnits(input), true);
          } else {
            const units = unitsOf(o.ConsumedCapacity as Capacity | undefined);
            const empty = op === 'Query' && ((o.Count as number | undefined) ?? 0) === 0;
            record(empty ? 'empty' : 'ok', READS.has(op) ? units : 0, READS.has(op) ? 0 : units, false);
          }
          return out;
        } catch (error) {
          const name = (error as Error).name;
          if (service === 'dynamodb' && REFUSED.has(name)) {
            const units = op === 'TransactWriteItems' ? transactionUnits(input) : 1;
            record(name.replace(/Exception$/, ''), 0, units, true);
          } else record(name, 0, 0, false);
          throw error;
        }
      };
    client.middlewareStack.add(counting as never, { step: 'initialize', name: 'benchKeysCallCounter' });
    const attempts = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => {
      this.attempts.set(tag, (this.attempts.get(tag) ?? 0) + 1);
      return next(args);
    };
    client.middlewareStack.add(attempts as never, { step: 'deserialize', name: 'benchKeysAttemptCounter' });
    return client;
  }

  dynamo(client: DynamoDBClient, who: Who): DynamoDBClient {
    return this.#count(client, who, 'dynamodb');
  }

  sqs(client: SQSClient, who: Who): SQSClient {
    return this.#count(client, who, 'sqs');
  }

  /** Clients whose attempts outnumber their commands (the SDK retried), as `tag: attempts / commands`. */
  retries(): string[] {
    return [...this.attempts]
      .filter(([tag, n]) => n > (this.started.get(tag) ?? 0))
      .map(([tag, n]) => `${tag}: ${n} attempts / ${this.started.get(tag) ?? 0} commands`);
  }
}

/** Calls that go on whatever is enqueued: the ticks' Query pages that found nothing, empty long polls, the pause watch. */
export const idle = (c: Call): boolean => c.outcome === 'empty' || c.on === 'control';
