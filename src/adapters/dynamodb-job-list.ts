import { QueryCommand, type QueryCommandOutput } from '@aws-sdk/client-dynamodb';
import { ConfigError } from '../core/errors.js';
import { LIST_INDEXES, LIST_SAID, LIST_SHARDS, type ListIndex } from '../core/job-list-index.js';
import {
  cursorTime,
  fromListCursor,
  JOB_STATES,
  type JobList,
  type JobListPage,
  type JobListQuery,
  type JobListRow,
  listLimit,
  listTimeKey,
  toListCursor,
} from '../ports/job-list.js';
import type { JobState } from '../ports/status-store.js';
import type { Item, TableRef } from './dynamodb-items.js';
import { jobNameKey, stateKey, tenantKey } from './dynamodb-list-keys.js';

/** One partition of a list index a page reads, and how far it has read it. */
interface Read {
  readonly index: ListIndex;
  readonly key: string;
  readonly state: JobState;
  start: Item | undefined;
  /** The order key of the last item evaluated: everything above it in this partition is known. */
  low: string | undefined;
  done: boolean;
}

/** Rounds of reads a page makes after its first before it answers with what it has (a tenant's rare job among many, filtered): 5 reads a partition. */
const MORE_ROUNDS = 4;

/** Items a filtered read evaluates per page row asked for (DynamoDB counts a Query's Limit before its filter). */
const FILTERED_READ_FACTOR = 10;

/**
 * The jobs list on DynamoDB (core/job-list-index.ts): a query with a tenant reads `jobs-by-tenant`,
 * else one with a job name `jobs-by-job`, else `jobs-by-state`; one partition per shard of each
 * state asked (all seven when none): Queries on the key and a time range, newest first, merged by
 * order key. Every filter is in the key but the job name given with a tenant, so those pages come
 * full from `limit` items a partition. Tenant and job together filter the tenant's partitions on
 * the job name: a page reads on, round after round, until it has its rows; past MORE_ROUNDS it
 * answers the rows it is sure of (maybe fewer, maybe none), a cursor from where it stopped reading
 * and that cursor's time (`lookedBackTo`). Each row is checked against its partition's state, so a
 * record whose keys a writer without them left behind is never listed under a state it has left
 * (`sqs-jobs store create --backfill` puts its keys right).
 */
export class DynamoJobList implements JobList {
  readonly #t: TableRef;

  constructor(t: TableRef) {
    this.#t = t;
  }

  async list(query: JobListQuery, cursor?: string): Promise<JobListPage> {
    const limit = listLimit(query);
    const before = cursor === undefined ? undefined : fromListCursor(cursor);
    const since = query.since === undefined ? undefined : listTimeKey(query.since.getTime());
    if (before !== undefined && since !== undefined && before < since) return { rows: [], cursor: undefined };
    const reads = partitions(query);
    const rows: { key: string; row: JobListRow }[] = [];
    for (let round = 0; ; round++) {
      rows.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
      const kth = rows.length >= limit ? rows[limit - 1]!.key : undefined;
      // A partition whose unread items are all below the page's last row cannot change the page.
      const pending = reads.filter((r) => !r.done && (kth === undefined || r.low === undefined || r.low > kth));
      if (pending.length === 0) break;
      if (round > MORE_ROUNDS) {
        const frontier = pending.map((r) => r.low!).reduce((a, b) => (a > b ? a : b));
        const sure = once(rows.filter((r) => r.key >= frontier)).slice(0, limit);
        const next = toListCursor(sure.length === limit ? sure[limit - 1]!.key : frontier);
        return { rows: sure.map((r) => r.row), cursor: next, lookedBackTo: cursorTime(next) };
      }
      const size = filtered(query) ? Math.min(1_000, limit * FILTERED_READ_FACTOR) : limit;
      await Promise.all(pending.map((r) => this.#read(r, query, { since, before, size }, rows)));
    }
    const page = once(rows).slice(0, limit);
    const more = rows.length > limit || reads.some((r) => !r.done);
    const next = more && page.length > 0 ? toListCursor(page.at(-1)!.key) : undefined;
    return { rows: page.map((r) => r.row), cursor: next, ...(next === undefined ? {} : { lookedBackTo: cursorTime(next) }) };
  }

  /** One Query of a partition: its next items in the range, newest first, those matching added to `rows`. */
  async #read(
    r: Read,
    query: JobListQuery,
    range: { since: string | undefined; before: string | undefined; size: number },
    rows: { key: string; row: JobListRow }[],
  ): Promise<void> {
    const { since, before } = range;
    const values: Item = { ':key': { S: r.key }, ':state': { S: r.state } };
    if (since !== undefined) values[':since'] = { S: since };
    if (before !== undefined) values[':before'] = { S: before };
    const byJob = filtered(query);
    if (byJob) values[':job'] = { S: query.job! };
    const time =
      since !== undefined && before !== undefined
        ? ' AND #at BETWEEN :since AND :before'
        : since !== undefined
          ? ' AND #at >= :since'
          : before !== undefined
            ? ' AND #at < :before'
            : '';
    let answer: QueryCommandOutput;
    try {
      answer = await this.#t.client.send(
        new QueryCommand({
          TableName: this.#t.table,
          IndexName: r.index.name,
          KeyConditionExpression: `#key = :key${time}`,
          FilterExpression: byJob ? '#state = :state AND #job = :job' : '#state = :state',
          ExpressionAttributeNames: {
            '#key': r.index.partitionKey,
            ...(time === '' ? {} : { '#at': r.index.sortKey }),
            '#state': 'state',
            ...(byJob ? { '#job': 'jobName' } : {}),
          },
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: range.size,
          ...(r.start === undefined ? {} : { ExclusiveStartKey: r.start }),
        }),
      );
    } catch (error) {
      throw refusal(error, this.#t.table, r.index.name) ?? error;
    }
    for (const item of answer.Items ?? []) {
      const key = item[r.index.sortKey]?.S;
      if (key === undefined || key === before) continue;
      rows.push({ key, row: rowOf(item, key) });
    }
    r.start = answer.LastEvaluatedKey;
    r.low = answer.LastEvaluatedKey?.[r.index.sortKey]?.S;
    r.done = answer.LastEvaluatedKey === undefined;
  }
}

/**
 * Each job once, at its newest entry: while an index lags a state change (a second or so) the
 * job's old entry and its new one may both be read.
 */
function once(rows: { key: string; row: JobListRow }[]): { key: string; row: JobListRow }[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.row.jobId) && seen.add(r.row.jobId) !== undefined);
}

/** Whether a query filters on the job name (tenant and job together): its pages may come short. */
const filtered = (query: JobListQuery): boolean => query.tenant !== undefined && query.job !== undefined;

/** The index and partition key of a query's state's shard: its tenant's, else its job's, else the state's. */
function keyOf(query: JobListQuery, state: JobState, shard: number): { index: ListIndex; key: string } {
  if (query.tenant !== undefined) return { index: LIST_INDEXES.byTenant, key: tenantKey(query.tenant, state, shard) };
  if (query.job !== undefined) return { index: LIST_INDEXES.byJob, key: jobNameKey(query.job, state, shard) };
  return { index: LIST_INDEXES.byState, key: stateKey(state, shard) };
}

/** The partitions a query reads: each state asked (all when none) in every shard. */
function partitions(query: JobListQuery): Read[] {
  const states = query.state === undefined ? JOB_STATES : [query.state];
  return states.flatMap((state) =>
    Array.from(
      { length: LIST_SHARDS },
      (_, shard): Read => ({ ...keyOf(query, state, shard), state, start: undefined, low: undefined, done: false }),
    ),
  );
}

function rowOf(item: Item, key: string): JobListRow {
  const tenant = item.tenant?.S;
  const said = item[LIST_SAID]?.S;
  return {
    jobId: key.slice(14),
    jobName: item.jobName?.S ?? 'unknown',
    ...(tenant === undefined ? {} : { tenant }),
    state: item.state!.S as JobState,
    attempt: Number(item.attempt?.N ?? 0),
    at: new Date(Number(key.slice(0, 13))).toISOString(),
    ...(said === undefined || said === '' ? {} : { said }),
  };
}

/**
 * What to do about a table that cannot be listed (DynamoDB's own answer names neither fix): made
 * before the list indexes, not there, or a role without Query on the index. Else undefined.
 */
function refusal(error: unknown, table: string, index: string): Error | undefined {
  const e = error as { name?: string; message?: string };
  if (e.name === 'ValidationException' && /specified index/i.test(e.message ?? ''))
    return new ConfigError(
      `the job store table ${table} has no index ${index}: run \`sqs-jobs store create --table ${table}\` (it adds the list indexes and backfills the records; with the CDK construct, set jobStore.jobsList: true instead)`,
      { cause: error },
    );
  if (e.name === 'ResourceNotFoundException')
    return new ConfigError(`the job store table ${table} does not exist: check --table / SQS_JOBS_JOB_TABLE and the region`, {
      cause: error,
    });
  if (e.name === 'AccessDeniedException')
    return new ConfigError(
      `not allowed to read the jobs list: grant dynamodb:Query on arn:aws:dynamodb:<region>:<account>:table/${table}/index/${index} (${e.message ?? ''})`,
      { cause: error },
    );
  return undefined;
}
