/**
 * DynamoDB Local's warm-up before the throughput runs (bench/lib/warm-up.ts says why). Its status
 * writes take some 30 s of load to reach their steady cost (3.9 ms of its CPU each in the first
 * 5 s, 0.85 ms after some 30 s), and a tracked run of 1,000 jobs is over in 3 s: warmed with throughput
 * runs, it still cost 2-2.7 ms a job in the measured rounds. So: rounds of what a tracked job
 * costs the store, straight to it through a DynamoJobStore, until steady. Each round records
 * `round` jobs as waiting (the producer's UpdateItem each) and then completes them, 200 at a time
 * (shared calls of 25 UPDATEs, as a busy worker makes them); a round is judged by its completions.
 */
import { randomUUID } from 'node:crypto';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { untilSteady } from '../lib/warm-up.js';
import { CREDENTIALS } from './stack.js';

const AT_ONCE = 200;

export async function warmDynamoDb(
  store: { table: string; endpoint: string },
  round: number,
  minMs: number,
  maxMs: number,
): Promise<number[]> {
  const client = createDynamoClient({ endpoint: store.endpoint, region: 'us-east-1' }, { maxSockets: 50 }, CREDENTIALS);
  const s = new DynamoJobStore({ client, table: store.table, ttlSeconds: 3_600 });
  const inTurn = async (ids: string[], change: (jobId: string) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        while (next < ids.length) await change(ids[next++]!);
      }),
    );
  };
  try {
    return await untilSteady(
      async () => {
        const ids = Array.from({ length: round }, () => randomUUID());
        const enqueuedAt = new Date().toISOString();
        await inTurn(ids, (jobId) => s.transition({ jobId, jobName: 'warm-up', state: 'waiting', attempt: 0, at: new Date(), enqueuedAt }));
        const t0 = performance.now();
        await inTurn(ids, (jobId) =>
          s.transition({
            jobId,
            jobName: 'warm-up',
            state: 'completed',
            attempt: 1,
            at: new Date(),
            enqueuedAt,
            worker: 'warm-up',
            startedAt: new Date(),
          }),
        );
        return performance.now() - t0;
      },
      minMs,
      maxMs,
    );
  } finally {
    client.destroy();
  }
}
