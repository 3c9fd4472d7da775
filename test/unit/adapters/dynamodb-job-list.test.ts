import type { AttributeValue, DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { DynamoJobList } from '../../../src/adapters/dynamodb-job-list.js';
import { listFields } from '../../../src/adapters/dynamodb-list-keys.js';
import { LIST_INDEXES } from '../../../src/core/job-list-index.js';
import { parseJobListQuery, parseSince } from '../../../src/ops/job-list.js';
import { type JobListQuery, listSaid } from '../../../src/ports/job-list.js';
import type { Transition } from '../../../src/ports/status-store.js';

type Item = Record<string, AttributeValue>;

/**
 * A fake of DynamoDB's Query on the list indexes (key, time range, newest first, Limit counted
 * before the filter, LastEvaluatedKey), over items keyed by the store's own listFields.
 */
function fakeClient(items: Item[]): { client: DynamoDBClient; queries: () => number } {
  let queries = 0;
  const send = async (command: QueryCommand) => {
    queries++;
    const q = command.input;
    const index = Object.values(LIST_INDEXES).find((i) => i.name === q.IndexName)!;
    const v = q.ExpressionAttributeValues!;
    const inclusive = q.KeyConditionExpression!.includes('BETWEEN');
    const start = q.ExclusiveStartKey?.[index.sortKey]?.S;
    const range = items
      .filter((it) => it[index.partitionKey]?.S === v[':key']!.S)
      .filter((it) => v[':since'] === undefined || it.lsAt!.S! >= v[':since'].S!)
      .filter((it) => v[':before'] === undefined || (inclusive ? it.lsAt!.S! <= v[':before'].S! : it.lsAt!.S! < v[':before'].S!))
      .filter((it) => start === undefined || it.lsAt!.S! < start)
      .sort((a, b) => (a.lsAt!.S! < b.lsAt!.S! ? 1 : -1));
    const evaluated = range.slice(0, q.Limit);
    const kept = evaluated.filter((it) => it.state!.S === v[':state']!.S && (v[':job'] === undefined || it.jobName!.S === v[':job'].S));
    const last = evaluated.at(-1);
    return { Items: kept, LastEvaluatedKey: range.length > evaluated.length && last ? { [index.sortKey]: last.lsAt! } : undefined };
  };
  return { client: { send } as unknown as DynamoDBClient, queries: () => queries };
}

const BASE = Date.parse('2026-12-01T09:00:00Z');

function item(t: Transition): Item {
  return Object.fromEntries([
    ['jobName', { S: t.jobName }],
    ['state', { S: t.state }],
    ['attempt', { N: String(t.attempt) }],
    ...(t.tenant === undefined ? [] : [['tenant', { S: t.tenant }]]),
    ...listFields(t),
  ]);
}

async function pages(list: DynamoJobList, query: JobListQuery): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let cursor: string | undefined;
  do {
    const page = await list.list(query, cursor);
    ids.push(...page.rows.map((r) => r.jobId));
    sizes.push(page.rows.length);
    cursor = page.cursor;
  } while (cursor !== undefined && sizes.length < 100);
  return { ids, sizes };
}

describe('DynamoJobList over a fake Query', () => {
  // 9,000 failed jobs, 3 of them (1 in 3,000) a rare type; the rare ones spread through time.
  const all = Array.from({ length: 9_000 }, (_, i) =>
    item({
      jobId: `j-${i}`,
      jobName: i % 3_000 === 7 ? 'rare' : 'busy',
      tenant: 'acme',
      state: 'failed',
      attempt: 1,
      at: new Date(BASE + i * 1_000),
      error: 'Error:\n  boom\u0007',
    }),
  );

  it('a rare job (1 in 3,000) gets full pages from its own index, reading a few entries', async () => {
    const fake = fakeClient(all);
    const list = new DynamoJobList({ client: fake.client, table: 't', expiresAt: () => 0 });
    const { ids, sizes } = await pages(list, { job: 'rare', state: 'failed', limit: 1 });
    expect(ids).toEqual(['j-6007', 'j-3007', 'j-7']);
    expect(sizes.slice(0, 3)).toEqual([1, 1, 1]);
    expect(sizes.length).toBeLessThanOrEqual(4);
    expect(fake.queries()).toBeLessThanOrEqual(4 * 4 * 2);
    const first = await list.list({ job: 'rare' });
    expect(first.rows.map((r) => r.jobId)).toEqual(['j-6007', 'j-3007', 'j-7']); // every state: 28 partitions
    expect(first.rows[0]!.said).toBe('Error: boom'); // one line, no control characters
  });

  it('tenant and job together filter: a short page says how far back it looked, and going on finds them all', async () => {
    const list = new DynamoJobList({ client: fakeClient(all).client, table: 't', expiresAt: () => 0 });
    const page = await list.list({ tenant: 'acme', job: 'rare', limit: 1 });
    expect(page.rows).toHaveLength(0);
    expect(page.lookedBackTo).toMatch(/^2026-12-01T/);
    const { ids, sizes } = await pages(list, { tenant: 'acme', job: 'rare', state: 'failed', limit: 1 });
    expect(ids).toEqual(['j-6007', 'j-3007', 'j-7']);
    expect(sizes.length).toBeGreaterThan(3); // short pages between them
  });
});

describe('the jobs list text', () => {
  it('listSaid: reason and error on one line, control characters gone, at most 160 characters', () => {
    expect(listSaid('failed', 'Error:\n\tboom\u0000', 'retries-exhausted')).toBe('retries-exhausted: Error: boom');
    expect(listSaid('completed', 'old error', undefined)).toBe('');
    expect(listSaid('retrying', 'x'.repeat(500), undefined)).toHaveLength(160);
  });

  it('since: a duration, a date (UTC midnight) or a time with its zone; never local time, nor a date that is none', () => {
    const now = Date.parse('2026-12-07T12:00:00Z');
    expect(parseSince('1h', now)).toBe(now - 3_600_000);
    expect(parseSince('2026-12-01', now)).toBe(Date.parse('2026-12-01T00:00:00Z'));
    expect(parseSince('2026-12-01T10:00:00+01:00', now)).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect(parseSince('2026-12-01T09:00:00.250Z', now)).toBe(Date.parse('2026-12-01T09:00:00.250Z'));
    expect(parseSince('2026-12-01T09:00', now)).toMatchObject({ rule: expect.stringMatching(/add its zone$/) });
    expect(parseSince('2026-02-30', now)).toMatchObject({ rule: expect.stringMatching(/2026-02-30 is no date$/) });
    expect(parseSince('2026-12-01T24:00Z', now)).toMatchObject({ rule: expect.stringMatching(/out of range$/) });
    expect(parseJobListQuery({ limit: '1e1' })).toEqual({ problem: { field: 'limit', rule: 'must be a whole number from 1 to 200' } });
    expect(parseJobListQuery({ limit: '0x10' })).toMatchObject({ problem: { field: 'limit' } });
    expect(parseJobListQuery({ limit: '20' })).toMatchObject({ query: { limit: 20 } });
  });
});
