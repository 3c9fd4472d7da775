import { randomUUID } from 'node:crypto';
import { DescribeTimeToLiveCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { LOCAL_DYNAMODB } from '../helpers/stack.js';

const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `jobs-${randomUUID().slice(0, 8)}`;
const store = new DynamoJobStore({ client, table, ttlSeconds: 3_600 });
beforeAll(async () => {
  expect(await createJobTable(client, table)).toBe(true);
  expect(await createJobTable(client, table)).toBe(false); // idempotent
});
afterAll(() => client.destroy());

const done = { job: 'import-done', queueUrl: 'http://127.0.0.1:4566/000000000000/jobs', args: { source: 's3://b/k' } };
const id = () => `job-${randomUUID().slice(0, 8)}`;

/** What only DynamoDB's store has; the rest is in test/contracts/status-store-port.test.ts and fan-out-store-port.test.ts. */
describe('DynamoJobStore on DynamoDB Local', () => {
  it('sets the TTL attribute on records and child markers', async () => {
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'expiresAt', TimeToLiveStatus: 'ENABLED' });
    const parentId = id();
    await store.openFanOut(parentId, 'import', 1, done);
    await store.childEnded({ parentId, childId: 'c', succeeded: true }, 't', 60_000);
    const now = Date.now() / 1000;
    for (const pk of [`job#${parentId}`, `child#${parentId}#c`]) {
      const item = await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } } }));
      const expires = Number(item.Item?.expiresAt?.N);
      expect(expires).toBeGreaterThan(now + 3_500);
      expect(expires).toBeLessThan(now + 3_700);
    }
  });
});
