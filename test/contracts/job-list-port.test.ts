import { randomUUID } from 'node:crypto';
import { CreateTableCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { backfillListKeys } from '../../src/adapters/dynamodb-list-keys.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import type { JobList, JobListQuery, JobListRow } from '../../src/ports/job-list.js';
import type { JobStore } from '../../src/ports/job-store.js';
import type { JobState } from '../../src/ports/status-store.js';
import { jobStoreSubjects } from '../helpers/job-stores.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The jobs list's contract, on DynamoDB's store (DynamoDB Local, its list indexes) and the
 * in-memory one: every filter combination the CLI offers, paged 7 at a time over a known set of
 * records (every page full but the last, none twice, none missed, newest state change first),
 * `since`, a record following its state, and (DynamoDB) the backfill of records written before.
 */
const BASE = Date.parse('2026-12-01T09:00:00Z');
const JOBS = ['charge-invoice', 'send-email'] as const;
const TENANTS = ['acme', 'globex'] as const;
const STATES: readonly JobState[] = ['waiting', 'running', 'failed'];

interface Known {
  jobId: string;
  jobName: string;
  tenant: string | undefined;
  state: JobState;
  atMs: number;
}

/** Walk a job to `state` as producer and worker would: waiting, then running, then failed. */
async function record(store: JobStore, k: Known): Promise<void> {
  const base = { jobId: k.jobId, jobName: k.jobName, ...(k.tenant === undefined ? {} : { tenant: k.tenant }) };
  const path = STATES.slice(0, STATES.indexOf(k.state) + 1);
  for (const [i, state] of path.entries()) {
    const last = i === path.length - 1;
    const at = new Date(last ? k.atMs : k.atMs - 500);
    const extra = state === 'failed' ? { error: 'Error: card declined', reason: 'retries-exhausted' } : {};
    expect(await store.transition({ ...base, state, attempt: state === 'waiting' ? 0 : 1, at, ...extra })).toBe('applied');
  }
}

/** Every page of a query, `limit` at a time, checking each full but the last. */
async function allPages(list: JobList, query: JobListQuery): Promise<JobListRow[]> {
  const rows: JobListRow[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const page = await list.list(query, cursor);
    rows.push(...page.rows);
    cursor = page.cursor;
    if (cursor === undefined) return rows;
    expect(page.rows, JSON.stringify(query)).toHaveLength(query.limit ?? 50);
  }
  throw new Error('over 50 pages');
}

const newestFirst = (a: Known, b: Known) => b.atMs - a.atMs || (a.jobId < b.jobId ? 1 : -1);

describe.each(jobStoreSubjects())('jobs list contract: %s', (_name, store) => {
  const list = store.jobs!;
  const run = randomUUID().slice(0, 6);
  // 40 jobs: 2 job names × 2 tenants × 3 states (every 8th without a tenant), one second apart;
  // two in the same millisecond (ordered by job id).
  const known: Known[] = Array.from({ length: 40 }, (_, i) => ({
    jobId: `list-${run}-${String(i).padStart(2, '0')}`,
    jobName: `${JOBS[i % 2]}-${run}`,
    tenant: i % 8 === 7 ? undefined : `${TENANTS[Math.floor(i / 2) % 2]}-${run}`,
    state: STATES[i % 3]!,
    atMs: BASE + (i === 21 ? 20 : i) * 1_000,
  }));
  beforeAll(async () => {
    await Promise.all(known.map((k) => record(store, k)));
  });

  const combos: JobListQuery[] = [];
  for (const job of [undefined, `${JOBS[0]}-${run}`])
    for (const state of [undefined, 'failed' as const])
      for (const tenant of [undefined, `${TENANTS[1]}-${run}`])
        combos.push({ ...(job ? { job } : {}), ...(state ? { state } : {}), ...(tenant ? { tenant } : {}), limit: 7 });

  it.each(combos.map((q) => [JSON.stringify(q), q] as const))('pages %s full, newest first, each once', async (_q, query) => {
    const expected = known
      .filter(
        (k) =>
          (query.job === undefined || k.jobName === query.job) &&
          (query.state === undefined || k.state === query.state) &&
          (query.tenant === undefined || k.tenant === query.tenant),
      )
      .sort(newestFirst);
    expect(expected.length).toBeGreaterThan(0);
    const rows = await allPages(list, query);
    expect(rows.map((r) => r.jobId)).toEqual(expected.map((k) => k.jobId));
    const first = expected[0]!;
    expect(rows[0]).toEqual({
      jobId: first.jobId,
      jobName: first.jobName,
      ...(first.tenant === undefined ? {} : { tenant: first.tenant }),
      state: first.state,
      attempt: first.state === 'waiting' ? 0 : 1,
      at: new Date(first.atMs).toISOString(),
      ...(first.state === 'failed' ? { said: 'retries-exhausted: Error: card declined' } : {}),
    });
  });

  it('two changes in one millisecond on a page boundary: one on each page, in job id order', async () => {
    // Jobs 21 and 20 share a millisecond; 18 newer jobs come first, so a page of 19 ends between them.
    const page = await list.list({ limit: 19 });
    const next = await list.list({ limit: 19 }, page.cursor);
    const at20 = known.filter((k) => k.atMs === BASE + 20_000).map((k) => k.jobId);
    const mine = (ids: string[]) => ids.filter((id) => at20.includes(id));
    expect(mine(page.rows.map((r) => r.jobId))).toEqual([at20[1]]);
    expect(mine(next.rows.map((r) => r.jobId))).toEqual([at20[0]]);
    expect(page.lookedBackTo).toBe(new Date(BASE + 20_000).toISOString());
  });

  it('since: only state changes at or after it, also across a cursor; past everything, an empty last page', async () => {
    const since = new Date(BASE + 25_000);
    const rows = await allPages(list, { since, limit: 7 });
    expect(rows.map((r) => r.jobId)).toEqual(
      known
        .filter((k) => k.atMs >= since.getTime())
        .sort(newestFirst)
        .map((k) => k.jobId),
    );
    const tenant = `${TENANTS[0]}-${run}`;
    const byTenant = await allPages(list, { tenant, state: 'running', since: new Date(BASE + 10_000), limit: 2 });
    expect(byTenant.map((r) => r.jobId)).toEqual(
      known
        .filter((k) => k.tenant === tenant && k.state === 'running' && k.atMs >= BASE + 10_000)
        .sort(newestFirst)
        .map((k) => k.jobId),
    );
    expect(await list.list({ since: new Date(BASE + 3_600_000) })).toEqual({ rows: [], cursor: undefined });
  });

  it('a job follows its state: listed under the new one, at its time, and no longer under the old', async () => {
    const k = { ...known[0]!, jobId: `moved-${run}`, atMs: BASE + 100_000 };
    await record(store, k);
    const job = { job: k.jobName, tenant: k.tenant! };
    expect((await list.list({ ...job, state: 'waiting', limit: 1 })).rows[0]?.jobId).toBe(k.jobId);
    const later = new Date(BASE + 200_000);
    await store.transition({ jobId: k.jobId, jobName: k.jobName, tenant: k.tenant!, state: 'completed', attempt: 1, at: later });
    expect((await list.list({ ...job, state: 'waiting', limit: 1 })).rows[0]?.jobId).not.toBe(k.jobId);
    expect((await list.list({ ...job, state: 'completed' })).rows).toEqual([
      { jobId: k.jobId, jobName: k.jobName, tenant: k.tenant, state: 'completed', attempt: 1, at: later.toISOString() },
    ]);
    expect((await store.get(k.jobId))?.tenant).toBe(k.tenant);
  });

  it('a change made without the tenant takes the job out of the tenant’s lists (never left under a state it left)', async () => {
    const tenant = `solo-${run}`;
    const ids = Array.from({ length: 5 }, (_, i) => `untold-${run}-${i}`);
    const at = new Date(BASE + 300_000);
    await Promise.all(ids.map((jobId) => store.transition({ jobId, jobName: 'untold', tenant, state: 'waiting', attempt: 0, at })));
    expect((await list.list({ tenant })).rows).toHaveLength(5);
    await Promise.all(ids.map((jobId) => store.transition({ jobId, jobName: 'untold', state: 'running', attempt: 1, at })));
    expect((await list.list({ tenant })).rows).toEqual([]);
    expect((await list.list({ job: 'untold', state: 'running' })).rows.map((r) => [r.jobId, r.tenant])).toEqual(
      [...ids].reverse().map((id) => [id, tenant]),
    );
  });

  it('a late change refused (stale) leaves the job listed under its final state', async () => {
    const k = { ...known[1]!, jobId: `late-${run}`, atMs: BASE + 400_000 };
    const base = { jobId: k.jobId, jobName: k.jobName, tenant: k.tenant! };
    await store.transition({ ...base, state: 'completed', attempt: 1, at: new Date(k.atMs) });
    expect(await store.transition({ ...base, state: 'running', attempt: 1, at: new Date(k.atMs + 1_000) })).toBe('stale');
    expect((await list.list({ job: k.jobName, limit: 1 })).rows).toEqual([
      { jobId: k.jobId, jobName: k.jobName, tenant: k.tenant, state: 'completed', attempt: 1, at: new Date(k.atMs).toISOString() },
    ]);
  });

  it('refuses a cursor it did not give', async () => {
    await expect(list.list({}, 'not-a-cursor')).rejects.toMatchObject({ code: 'OPTIONS_INVALID' });
  });
});

describe('DynamoDB: records written before the list indexes', () => {
  const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
  const table = `jobs-bf-${randomUUID().slice(0, 8)}`;
  const store = new DynamoJobStore({ client, table, ttlSeconds: 3_600 });
  beforeAll(async () => {
    await createJobTable(client, table);
  });
  afterAll(() => client.destroy());

  it('a table without the list indexes: CONFIG_INVALID saying to run `sqs-jobs store create`', async () => {
    const bare = `jobs-bare-${randomUUID().slice(0, 8)}`;
    await client.send(
      new CreateTableCommand({
        TableName: bare,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
    const old = new DynamoJobStore({ client, table: bare, ttlSeconds: 3_600 });
    await expect(old.jobs.list({ state: 'failed' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining(
        `the job store table ${bare} has no index jobs-by-state: run \`sqs-jobs store create --table ${bare}\``,
      ),
    });
  });

  it('are listed once `store create` backfills them (idempotent), and a rare job behind many others pages through whole', async () => {
    // The old shape: a record as the store wrote it before (no tenant, no list keys).
    const old = (i: number, state: JobState) => ({
      pk: { S: `job#old-${i}` },
      jobId: { S: `old-${i}` },
      jobName: { S: 'legacy' },
      state: { S: state },
      attempt: { N: '1' },
      updatedAt: { S: new Date(BASE - i * 1_000).toISOString() },
    });
    for (let i = 0; i < 5; i++) await client.send(new PutItemCommand({ TableName: table, Item: old(i, i < 3 ? 'failed' : 'completed') }));
    // And one an older version moved on after this one listed it (its keys still say running).
    await store.transition({ jobId: 'moved-on', jobName: 'legacy', tenant: 'acme', state: 'running', attempt: 1, at: new Date(BASE) });
    const { pk: _pk, ...movedOn } = old(9, 'completed');
    await client.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: 'job#moved-on' } },
        UpdateExpression: 'SET #s = :s, updatedAt = :u',
        ExpressionAttributeNames: { '#s': 'state' },
        ExpressionAttributeValues: { ':s': movedOn.state, ':u': movedOn.updatedAt },
      }),
    );
    expect((await store.jobs.list({ job: 'legacy' })).rows).toEqual([]);
    expect(await backfillListKeys(client, table)).toEqual({ scanned: 6, backfilled: 6 });
    expect(await backfillListKeys(client, table)).toEqual({ scanned: 6, backfilled: 0 });
    expect((await store.jobs.list({ tenant: 'acme', state: 'completed' })).rows.map((r) => [r.jobId, r.at])).toEqual([
      ['moved-on', movedOn.updatedAt.S],
    ]);
    const failed = await store.jobs.list({ job: 'legacy', state: 'failed' });
    expect(failed.rows.map((r) => [r.jobId, r.at])).toEqual([0, 1, 2].map((i) => [`old-${i}`, new Date(BASE - i * 1_000).toISOString()]));

    // 320 newer jobs of another type in the same state: the rare one is read by its own key
    // (jobs-by-job), every page full but the last.
    const at = new Date(BASE + 60_000);
    await Promise.all(
      Array.from({ length: 320 }, (_, i) => store.transition({ jobId: `busy-${i}`, jobName: 'busy', state: 'failed', attempt: 1, at })),
    );
    const rows: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    do {
      const page = await store.jobs.list({ job: 'legacy', state: 'failed', limit: 1 }, cursor);
      rows.push(...page.rows.map((r) => r.jobId));
      cursor = page.cursor;
      pages++;
    } while (cursor !== undefined);
    expect(rows).toEqual(['old-0', 'old-1', 'old-2']);
    expect(pages).toBeLessThanOrEqual(rows.length + 1);
    // Tenant and job together filter the tenant's entries: a short page says how far back it looked.
    await Promise.all(
      Array.from({ length: 320 }, (_, i) =>
        store.transition({ jobId: `acme-busy-${i}`, jobName: 'busy', tenant: 'acme', state: 'completed', attempt: 1, at }),
      ),
    );
    const short = await store.jobs.list({ tenant: 'acme', job: 'legacy', state: 'completed', limit: 1 });
    expect(short.rows).toEqual([]);
    expect(short.lookedBackTo! <= at.toISOString()).toBe(true);
  });
});
