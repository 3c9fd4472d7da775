import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import type { JobStore } from '../../src/ports/job-store.js';
import { MemoryJobStore } from '../../src/testing/memory-job-store.js';
import { LOCAL_DYNAMODB } from './stack.js';

/**
 * The job stores a store contract runs against: DynamoDB's on DynamoDB Local (a fresh table per
 * test file) and the in-memory one of `sqs-jobs/testing`. Call at a test file's top level.
 */
export function jobStoreSubjects(): [string, JobStore][] {
  const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
  const table = `jobs-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    expect(await createJobTable(client, table)).toBe('created');
  });
  afterAll(() => client.destroy());
  return [
    ['DynamoDB (DynamoDB Local)', new DynamoJobStore({ client, table, ttlSeconds: 3_600 })],
    ['in-memory (sqs-jobs/testing)', new MemoryJobStore()],
  ];
}

export const newJobId = (): string => `job-${randomUUID().slice(0, 8)}`;
