import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoControls } from '../../src/adapters/dynamodb-controls.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { scopeKey } from '../../src/core/pause.js';
import type { ControlStore } from '../../src/ports/control-store.js';
import { MemoryControls } from '../../src/testing/memory-controls.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The control store's contract (pauses kept in the job store), on DynamoDB Local and in memory: one
 * mark per scope, as written; a version that grows with each change and not without one; a resume
 * that says whether there was a pause.
 */
const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `controls-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe('created');
});
afterAll(() => client.destroy());

const subjects: [string, () => ControlStore][] = [
  ['DynamoDB (DynamoDB Local)', () => new DynamoControls({ client, table, expiresAt: () => 0 })],
  ['in-memory', () => new MemoryControls()],
];

describe.each(subjects)('control store contract: %s', (_name, make) => {
  const store = make();
  it('starts with no pause, keeps each scope once as written, and counts each change', async () => {
    const start = await store.readPauses();
    expect(start.marks).toEqual([]);
    const at = Date.now();
    const v1 = await store.putPause({ scope: { job: 'charge-invoice' }, by: 'ana@ops', reason: 'payments API down', at });
    const v2 = await store.putPause({ scope: { job: 'charge-invoice', tenant: 'acme' }, by: 'ana@ops', at, until: at + 60_000 });
    const v3 = await store.putPause({ scope: { queue: 'orders.fifo' }, by: 'bo', at });
    const v4 = await store.putPause({ scope: { tenant: 'a:b/c' }, by: 'bo', at });
    expect([v1, v2, v3, v4]).toEqual([start.version + 1, start.version + 2, start.version + 3, start.version + 4]);
    // The same scope again replaces its mark.
    const v5 = await store.putPause({ scope: { job: 'charge-invoice' }, by: 'cy', reason: 'still down', at: at + 1 });
    expect(v5).toBe(v4 + 1);
    const read = await store.readPauses();
    expect(read.version).toBe(v5);
    const byKey = Object.fromEntries(read.marks.map((m) => [scopeKey(m.scope), m]));
    expect(Object.keys(byKey).sort()).toEqual([
      'job:charge-invoice',
      'job:charge-invoice tenant:acme',
      'queue:orders.fifo',
      'tenant:a:b/c',
    ]);
    expect(byKey['job:charge-invoice']).toEqual({ scope: { job: 'charge-invoice' }, by: 'cy', reason: 'still down', at: at + 1 });
    expect(byKey['job:charge-invoice tenant:acme']).toEqual({
      scope: { job: 'charge-invoice', tenant: 'acme' },
      by: 'ana@ops',
      at,
      until: at + 60_000,
    });
    expect(byKey['tenant:a:b/c']?.scope).toEqual({ tenant: 'a:b/c' });
  });

  it('removes a timed pause ended over a day ago with the next pause, and keeps one ended less long', async () => {
    const now = Date.now();
    await store.putPause({ scope: { tenant: 'long-gone' }, by: 'bo', at: now - 3 * 86_400_000, until: now - 2 * 86_400_000 });
    await store.putPause({ scope: { tenant: 'just-ended' }, by: 'bo', at: now - 3_600_000, until: now - 60_000 });
    await store.putPause({ scope: { tenant: 'fresh' }, by: 'bo', at: now });
    const keys = (await store.readPauses()).marks.map((m) => scopeKey(m.scope));
    expect(keys).toContain('tenant:just-ended');
    expect(keys).toContain('tenant:fresh');
    expect(keys).not.toContain('tenant:long-gone');
    await store.removePause({ tenant: 'just-ended' });
    await store.removePause({ tenant: 'fresh' });
  });

  it('resumes a scope once: a resume of nothing changes no version', async () => {
    const before = await store.readPauses();
    const first = await store.removePause({ job: 'charge-invoice' });
    expect(first).toEqual({ removed: true, version: before.version + 1 });
    expect(await store.removePause({ job: 'charge-invoice' })).toEqual({ removed: false, version: before.version + 1 });
    expect(await store.removePause({ tenant: 'nobody' })).toEqual({ removed: false, version: before.version + 1 });
    const after = await store.readPauses();
    expect(after.marks.map((m) => scopeKey(m.scope)).sort()).toEqual([
      'job:charge-invoice tenant:acme',
      'queue:orders.fifo',
      'tenant:a:b/c',
    ]);
  });
});
