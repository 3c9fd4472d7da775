/**
 * DynamoDB Local's warm-up before the throughput runs (bench/lib/warm-up.ts says why). Its status
 * writes take some 30 s of load to reach their steady cost (3.9 ms of its CPU each in the first
 * 5 s, 0.85 ms after 25 s, measured with the loop below), and a tracked run of 1,000 jobs is over in
 * 3 s: warming it with throughput runs left it at 2-2.7 ms a job in the measured rounds. So: rounds
 * of `round` state changes through a DynamoJobStore, 200 at a time (shared calls, as a busy worker
 * makes them), on records made first.
 */
import { randomUUID } from 'node:crypto';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { untilSteady } from '../lib/warm-up.js';
import { CREDENTIALS } from './stack.js';

const RECORDS = 2_000;
const AT_ONCE = 200;

export async function warmDynamoDb(
  store: { table: string; endpoint: string },
  round: number,
  minMs: number,
  maxMs: number,
): Promise<number[]> {
  const client = createDynamoClient({ endpoint: store.endpoint, region: 'us-east-1' }, { maxSockets: 50 }, CREDENTIALS);
  const s = new DynamoJobStore({ client, table: store.table, ttlSeconds: 3_600 });
  try {
    const ids = Array.from({ length: RECORDS }, () => randomUUID());
    const enqueuedAt = new Date().toISOString();
    for (let k = 0; k < RECORDS; k += 50) {
      await Promise.all(
        ids
          .slice(k, k + 50)
          .map((jobId) => s.transition({ jobId, jobName: 'warm-up', state: 'waiting', attempt: 0, at: new Date(), enqueuedAt })),
      );
    }
    let n = 0;
    const change = () => {
      const i = n++;
      // Each record's next change is a later attempt, so every one applies (a write, as a job's end is).
      return s.transition({
        jobId: ids[i % RECORDS]!,
        jobName: 'warm-up',
        state: 'retrying',
        attempt: 1 + Math.floor(i / RECORDS),
        at: new Date(),
        enqueuedAt,
        worker: 'warm-up',
        error: 'Error: warm-up',
        nextAttemptAt: new Date(),
      });
    };
    return await untilSteady(
      async () => {
        const end = n + round;
        await Promise.all(
          Array.from({ length: AT_ONCE }, async () => {
            while (n < end) await change();
          }),
        );
      },
      minMs,
      maxMs,
    );
  } finally {
    client.destroy();
  }
}
