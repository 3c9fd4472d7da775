/**
 * Calls counted on the SDK clients, for bench/schedules/ (run-at.ts and occurrences.ts): every SQS and DynamoDB call
 * by operation (a middleware in the `deserialize` step, once per attempt, as run-at.ts counts), and
 * DynamoDB's capacity units as DynamoDB itself reports them: each call that can says
 * `ReturnConsumedCapacity: 'INDEXES'`, and the units of the table and of the due index are summed
 * (DynamoDB Local applies AWS's rules: a write that moves an item in the index costs the index two).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { CallTally } from '../events/counting.js';

/** Read and write units, on demand: read request units and write request units. */
export interface Units {
  read: number;
  write: number;
}

export const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
export const WITH_CAPACITY = new Set([
  ...READS,
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'ExecuteStatement',
  'BatchExecuteStatement',
  'ExecuteTransaction',
]);

type Stack = { middlewareStack: { add: (m: never, o: object) => void } };
const opOf = (context: { commandName?: string }) => (context.commandName ?? 'Unknown').replace(/Command$/, '');

/** Count every call `client` makes, by operation, in `tally`. */
export function countCalls<C extends Stack>(client: C, tally: CallTally): C {
  const middleware =
    <A, R>(next: (args: A) => Promise<R>, context: { commandName?: string }) =>
    (args: A): Promise<R> => {
      tally.add(opOf(context));
      return next(args);
    };
  client.middlewareStack.add(middleware as never, { step: 'deserialize', name: 'benchSchedulesCallCounter' });
  return client;
}

export function countedSqs(client: SQSClient): { client: SQSClient; calls: CallTally } {
  const calls = new CallTally();
  return { client: countCalls(client, calls), calls };
}

/** The client, its calls, and the units its calls consumed (reset both with reset()). */
export function countedDynamo(client: DynamoDBClient): {
  client: DynamoDBClient;
  calls: CallTally;
  units: Units;
  /** Time the item calls took, summed (ms): with calls, their mean. */
  waited: { ms: number; calls: number };
  reset(): void;
} {
  const calls = new CallTally();
  const units: Units = { read: 0, write: 0 };
  const waited = { ms: 0, calls: 0 };
  type Capacity = { CapacityUnits?: number };
  const middleware =
    <R extends { output?: { ConsumedCapacity?: Capacity | Capacity[] } }>(
      next: (args: { input: Record<string, unknown> }) => Promise<R>,
      context: { commandName?: string },
    ) =>
    async (args: { input: Record<string, unknown> }): Promise<R> => {
      const op = opOf(context);
      if (!WITH_CAPACITY.has(op)) return next(args);
      const from = performance.now();
      const out = await next({ ...args, input: { ...args.input, ReturnConsumedCapacity: 'INDEXES' } });
      waited.ms += performance.now() - from;
      waited.calls++;
      const consumed = out.output?.ConsumedCapacity;
      const sum = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]).reduce(
        (n, c) => n + (c.CapacityUnits ?? 0),
        0,
      );
      if (READS.has(op)) units.read += sum;
      else units.write += sum;
      return out;
    };
  client.middlewareStack.add(middleware as never, { step: 'initialize', name: 'benchSchedulesCapacity' });
  countCalls(client, calls);
  return {
    client,
    calls,
    units,
    waited,
    reset() {
      calls.reset();
      waited.ms = 0;
      waited.calls = 0;
      units.read = 0;
      units.write = 0;
    },
  };
}

/** AWS list prices, us-east-1: SQS standard per request; DynamoDB on demand per write and read request unit. */
export const PRICE = { sqsRequest: 0.4 / 1e6, write: 0.625 / 1e6, read: 0.125 / 1e6 };

export const percentile = (xs: readonly number[], p: number): number =>
  xs.length === 0 ? Number.NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
