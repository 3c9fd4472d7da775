import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoLock } from '../../src/adapters/dynamodb-lock.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { encodeEnvelope, envelopeAttributes } from '../../src/core/envelope.js';
import { defineJob } from '../../src/core/job.js';
import { LOCAL_DYNAMODB, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { useWorkers } from '../helpers/worker.js';

/**
 * The dedupe lock on DynamoDB as a worker runs it (LocalStack's SQS, DynamoDB Local, no memcached):
 * two workers, each with a DynamoLock of its own client, given every job twice (two messages of
 * one job id) run each once; what the lock asks of DynamoDB per job is counted and printed.
 */
const sqs = sqsClient();
const setup = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `dynamo-lock-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(setup, table)).toBe('created');
});
afterAll(() => {
  sqs.destroy();
  setup.destroy();
});
const start = useWorkers();

/** A client that counts its commands by name. */
function countingClient(counts: Map<string, number>): DynamoDBClient {
  const client = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
  client.middlewareStack.add(
    (next, context) => (args) => {
      counts.set(context.commandName ?? '?', (counts.get(context.commandName ?? '?') ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'countCalls' },
  );
  return client;
}

describe('DynamoLock under workers', () => {
  it('two workers given each of 40 jobs twice run each once; the lock’s DynamoDB calls per job are counted', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dynamo-lock');
    const runs = new Map<string, number>();
    const job = defineJob({
      name: 'charge',
      args: z.object({ n: z.number() }),
      handle: async (_args, ctx) => {
        runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1);
        await sleep(200); // long enough that the copies meet while it runs
      },
    });
    const counts = new Map<string, number>();
    const clients = [countingClient(counts), countingClient(counts)];
    const ids = Array.from({ length: 40 }, (_, n) => `charge-${n}-${randomUUID().slice(0, 6)}`);
    const entries = ids.flatMap((id, n) =>
      [0, 1].map((copy) => {
        const envelope = { v: 1 as const, id, job: 'charge', args: { n }, enqueuedAt: new Date().toISOString() };
        return { Id: `${n}-${copy}`, MessageBody: encodeEnvelope(envelope), MessageAttributes: envelopeAttributes(envelope) };
      }),
    );
    for (let i = 0; i < entries.length; i += 10)
      await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries.slice(i, i + 10) }));
    for (const client of clients)
      await start({ queues: [queueUrl], jobs: [job], lock: new DynamoLock({ table, client, keyPrefix: 'lock-test:' }) }).start();
    await eventually(
      async () => (await queueCounts(sqs, queueUrl)).visible + (await queueCounts(sqs, queueUrl)).inFlight === 0,
      'all handled',
      60_000,
    );
    await sleep(1_000);
    for (const client of clients) client.destroy();
    expect(ids.every((id) => runs.get(id) === 1)).toBe(true);
    const perJob = [...counts].map(([command, n]) => `${command} ${(n / ids.length).toFixed(2)}`).join(', ');
    console.log(`[dynamo-lock] DynamoDB calls per job (2 messages each): ${perJob}`);
  }, 90_000);
});
