import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoSchedules } from '../../src/adapters/dynamodb-schedules.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { defineJob } from '../../src/core/job.js';
import { SCHEDULE_SHARDS } from '../../src/ports/schedule-store.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { storedSpec } from '../../src/schedules/stored.js';
import { type TickPorts, tickShard } from '../../src/schedules/tick.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

/**
 * The tick on DynamoDB Local, its clock stepped by the test: several tickers, each with a client of
 * its own, race over the same schedules at every step; the store's conditional writes must leave
 * exactly one send per occurrence, none missing, whatever the index's reads show.
 */
const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `sched-tick-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe('created');
});
afterAll(() => client.destroy());

describe('the schedule tick on DynamoDB', () => {
  it('three tickers racing over 12 schedules for 120 stepped seconds send each occurrence exactly once', async () => {
    const job = defineJob({ name: 'report', args: z.object({ n: z.number() }), handle: () => {} });
    const store = new DynamoSchedules({ client, table, expiresAt: () => 0 });
    const ids = Array.from({ length: 12 }, (_, n) => `race-${n}-${randomUUID().slice(0, 6)}`);
    for (const [n, id] of ids.entries()) {
      const def = defineSchedule({ id, job, args: { n }, every: n % 2 === 0 ? '5s' : '7s', start: new Date(1_000_000 * 1000) });
      await store.putSchedule({ id, owner: 'app:race', spec: storedSpec(def, 'http://127.0.0.1:4566/000000000000/q'), next: 1_000_000 });
    }
    const sent: string[] = [];
    const clock = { nowS: 0 };
    const clients = ['a', 'b', 'c'].map(() => createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {}));
    onTestFinished(() => {
      for (const c of clients) c.destroy();
    });
    const tickers = ['a', 'b', 'c'].map(
      (me, i): TickPorts => ({
        store: new DynamoSchedules({ client: clients[i]!, table, expiresAt: () => 0 }),
        me,
        staleRunningS: 120,
        has: () => true,
        now: () => clock.nowS,
        send: async (o) => {
          sent.push(o.jobId);
          return undefined;
        },
        stateOf: async () => undefined,
        held: async () => false,
        onProblem: (id, problem) => {
          throw new Error(`${id}: ${problem}`);
        },
      }),
    );
    const end = 1_000_120;
    for (clock.nowS = 1_000_000; clock.nowS <= end; clock.nowS++)
      await Promise.all(tickers.flatMap((t) => Array.from({ length: SCHEDULE_SHARDS }, (_, shard) => tickShard(t, shard))));
    // The index lags a little: a last pass at the end time catches what a step's read did not show.
    clock.nowS = end;
    for (const t of tickers) for (let shard = 0; shard < SCHEDULE_SHARDS; shard++) await tickShard(t, shard);
    const want = ids.flatMap((id, n) => {
      const every = n % 2 === 0 ? 5 : 7;
      return Array.from({ length: Math.floor(120 / every) + 1 }, (_, k) => `${id}:${1_000_000 + k * every}`);
    });
    expect([...sent].sort()).toEqual([...want].sort()); // each once: no duplicate, none missing
  }, 120_000);
});
