import { type AttributeValue, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { LIST_INDEXES, LIST_SAID, LIST_SHARDS } from '../core/job-list-index.js';
import { listOrderKey, listSaid } from '../ports/job-list.js';
import { ENDED_STATES, type JobState, type Transition } from '../ports/status-store.js';
import { type Item, S, type TableRef, Update, updateIf } from './dynamodb-items.js';

/*
 * The list indexes' keys on a job's record (core/job-list-index.ts): set by the same write as the
 * state change they follow (dynamodb-transitions.ts), and by the backfill for records written
 * before the indexes were.
 */

const BY_STATE = LIST_INDEXES.byState.partitionKey;
const BY_JOB = LIST_INDEXES.byJob.partitionKey;
const BY_TENANT = LIST_INDEXES.byTenant.partitionKey;
const AT = LIST_INDEXES.byState.sortKey;

/** The shard of a job id's list entries: a stable hash, 0..LIST_SHARDS-1. */
export function listShard(jobId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < jobId.length; i++) h = Math.imul(h ^ jobId.charCodeAt(i), 0x01000193);
  return (h >>> 0) % LIST_SHARDS;
}

/** The `jobs-by-state` partition of a state's shard. */
export const stateKey = (state: JobState, shard: number): string => `${state}#${shard}`;

/** The `jobs-by-job` partition of a job name's state's shard (a job name holds no `#`). */
export const jobNameKey = (jobName: string, state: JobState, shard: number): string => `${jobName}#${state}#${shard}`;

/** The `jobs-by-tenant` partition of a tenant's state's shard (the tenant first: its text may hold `#`, the rest cannot). */
export const tenantKey = (tenant: string, state: JobState, shard: number): string => `${tenant}#${state}#${shard}`;

/** The attribute a change without a tenant removes: the record leaves the tenant lists rather than stay under a state it left. */
export const TENANT_KEY_ATTRIBUTE = BY_TENANT;

/**
 * The list attributes a state change sets, in its own write: its state's partitions, its place in
 * time and what it says (always set, '' for nothing, so no earlier change's words stay listed).
 */
export function listFields(t: Transition): [string, AttributeValue][] {
  const shard = listShard(t.jobId);
  const fields: [string, AttributeValue][] = [
    [BY_STATE, S(stateKey(t.state, shard))],
    [BY_JOB, S(jobNameKey(t.jobName, t.state, shard))],
    [AT, S(listOrderKey(t.at.getTime(), t.jobId))],
    [LIST_SAID, S(listSaid(t.state, t.error, t.reason))],
  ];
  if (t.tenant !== undefined) fields.push([BY_TENANT, S(tenantKey(t.tenant, t.state, shard))]);
  return fields;
}

/** What a backfill did: job records read, and those given their list keys. */
export interface BackfillReport {
  readonly scanned: number;
  readonly backfilled: number;
}

/** What the backfill reads of each record (placeholders all: some may be DynamoDB's reserved words). */
const SCANNED = [
  'pk',
  'jobId',
  'jobName',
  'state',
  'attempt',
  'tenant',
  'error',
  'reason',
  'updatedAt',
  'enqueuedAt',
  'startedAt',
  'finishedAt',
  BY_STATE,
  BY_JOB,
  BY_TENANT,
  AT,
  LIST_SAID,
];

/** Updates in flight at once while a page of the scan is put right. */
const UPDATES_AT_ONCE = 16;

/**
 * Give every job record the list keys it lacks, or has wrong (written before the list indexes, or
 * last changed by a version that did not write them): a paged Scan of the table (it reads every
 * item once: ~1 RCU per 8 KB read, eventually consistent; `sqs-jobs store create` runs it only when
 * it has just added a list index, or with `--backfill`), then one conditional UpdateItem per record
 * to put right, applied only while its state and attempt are those read (a change made meanwhile
 * wrote its own keys). Its time is when it entered its state: `finishedAt` for an ended one,
 * `startedAt` for a running one, `enqueuedAt` for a waiting or scheduled one (not `updatedAt`,
 * which progress moves), else `updatedAt`. Idempotent: a second run finds nothing to do.
 */
export async function backfillListKeys(client: DynamoDBClient, table: string): Promise<BackfillReport> {
  const t: TableRef = { client, table, expiresAt: () => 0 };
  let scanned = 0;
  let backfilled = 0;
  let start: Item | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'begins_with(pk, :job) AND attribute_exists(#state)',
        ProjectionExpression: SCANNED.map((_, i) => `#a${i}`).join(', '),
        ExpressionAttributeNames: { '#state': 'state', ...Object.fromEntries(SCANNED.map((name, i) => [`#a${i}`, name])) },
        ExpressionAttributeValues: { ':job': S('job#') },
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    const items = page.Items ?? [];
    scanned += items.length;
    const wrong = items.filter((item) => fix(item) !== undefined);
    for (let i = 0; i < wrong.length; i += UPDATES_AT_ONCE) {
      const done = await Promise.all(wrong.slice(i, i + UPDATES_AT_ONCE).map((item) => put(t, item)));
      backfilled += done.filter(Boolean).length;
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return { scanned, backfilled };
}

interface Keys {
  readonly state: string;
  readonly job: string | undefined;
  readonly tenant: string | undefined;
  readonly at: string;
  readonly said: string;
}

/** When a record entered its state, by what it keeps (epoch ms; 0 when it says nothing). */
function enteredAt(item: Item, state: JobState): number {
  const own = ENDED_STATES.has(state)
    ? item.finishedAt
    : state === 'running'
      ? item.startedAt
      : state === 'waiting' || state === 'scheduled'
        ? item.enqueuedAt
        : undefined;
  const ms = Date.parse(own?.S ?? item.updatedAt?.S ?? '');
  return Number.isNaN(ms) ? 0 : ms;
}

/** The list keys a scanned record should have, when they are not the ones it has. */
function fix(item: Item): Keys | undefined {
  const jobId = item.jobId?.S;
  const state = item.state?.S as JobState | undefined;
  if (jobId === undefined || state === undefined) return undefined;
  const shard = listShard(jobId);
  const byState = stateKey(state, shard);
  const job = item.jobName?.S === undefined ? undefined : jobNameKey(item.jobName.S, state, shard);
  const tenant = item.tenant?.S === undefined ? undefined : tenantKey(item.tenant.S, state, shard);
  const right = item[BY_STATE]?.S === byState && item[AT]?.S !== undefined;
  if (right && item[BY_JOB]?.S === job && item[BY_TENANT]?.S === tenant && item[LIST_SAID]?.S !== undefined) return undefined;
  // Its own time when its state's key was right (only another key was missing); else when it entered its state.
  const at = right ? item[AT]!.S! : listOrderKey(enteredAt(item, state), jobId);
  const said = item[LIST_SAID]?.S ?? listSaid(state, item.error?.S, item.reason?.S);
  return { state: byState, job, tenant, at, said };
}

async function put(t: TableRef, item: Item): Promise<boolean> {
  const keys = fix(item)!;
  const u = new Update();
  u.set(BY_STATE, S(keys.state)).set(AT, S(keys.at)).set(LIST_SAID, S(keys.said));
  if (keys.job === undefined) u.remove(BY_JOB);
  else u.set(BY_JOB, S(keys.job));
  if (keys.tenant === undefined) u.remove(BY_TENANT);
  else u.set(BY_TENANT, S(keys.tenant));
  const attempt = u.name('attempt');
  const same = item.attempt === undefined ? `attribute_not_exists(${attempt})` : `${attempt} = ${u.value(item.attempt)}`;
  return updateIf(t, { pk: item.pk! }, u, `${u.name('state')} = ${u.value(item.state!)} AND ${same}`);
}
