import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsProxy } from '../../bench/lib/sqs-proxy.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { ATTR_DLQ_REASON } from '../../src/core/dead-letter.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { fanOutResultSchema } from '../../src/fan-out/completion.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// Issue 17, 4: a job store that answers slowly (a cold DynamoDB, throttling, a network blip) or not
// at all must not turn finished fan-out children into SQS redrives: every child is counted once, the
// completion runs once, and the DLQ holds only what failed, each with its reason.
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `slow-${randomUUID().slice(0, 8)}`;
let proxy: SqsProxy;
beforeAll(async () => {
  await createJobTable(dynamo, table);
  proxy = await SqsProxy.start(LOCAL_DYNAMODB, 17); // the same loopback proxy the SQS fault suite uses
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await proxy.close();
});
const start = useWorkers();

/** Processes that keep every core busy for at most `ms` (a loaded host), stopped by the caller. */
function saturateCpu(ms: number): ChildProcess[] {
  const spin = `const end = Date.now() + ${ms}; while (Date.now() < end) {}`;
  return [0, 1].map(() => spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
}

describe('a slow, then unreachable, job store during a fan-out, on a busy machine', () => {
  // Fails without holding the message while settle waits for the store: the visibility timeout
  // lapses, the message comes back and spends receives, and SQS's redrive takes finished children
  // with no reason.
  it('counts every child once, completes once, and dead-letters only the failed children, with their reason', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'slow-store', { maxReceiveCount: 2 });
    const store = { table, endpoint: proxy.url };
    const completions: unknown[] = [];
    const done = defineJob({ name: 'rows-done', args: fanOutResultSchema, handle: (a) => void completions.push(a) });
    const row = defineJob({
      name: 'row',
      args: z.object({ n: z.number() }),
      handle: ({ n }) => {
        if (n % 6 === 5) throw new UnrecoverableError(`row ${n} is malformed`);
      },
    });
    const parent = defineJob({
      name: 'rows',
      args: z.object({ count: z.number() }),
      handle: ({ count }, ctx) =>
        ctx.fanOut(
          row,
          Array.from({ length: count }, (_, n) => ({ n })),
          { onComplete: { job: done, args: {} } },
        ),
    });
    // A visibility timeout shorter than one slow store call: only a held message survives it. (5 s,
    // not less: with both cores saturated, LocalStack took over 3 s to answer some extensions.)
    const worker = start({ queues: [queueUrl], jobs: [parent, row, done], store, visibilityTimeoutSeconds: 5, concurrency: 6 });
    const events = recordEvents(worker);
    let faulted = false;
    const timers: NodeJS.Timeout[] = [];
    worker.on('job:start', (info) => {
      if (info.jobName !== 'row' || faulted) return;
      faulted = true;
      proxy.setPlan({ latencyRate: 1, latencyMs: 7_000 }); // every store call answers after 7 s
      timers.push(setTimeout(() => proxy.setPlan({ resetRate: 0.6 }), 13_000)); // then most are dropped
      timers.push(setTimeout(() => proxy.setPlan({}), 22_000)); // then it recovers
    });
    const busy = saturateCpu(40_000);
    try {
      await worker.start();
      const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
      await producer.enqueue(parent, { count: 12 }, { track: true });
      producer.close();
      await eventually(() => completions.length === 1, 'the completion to run', 100_000);
      await eventually(
        async () => {
          const q = await queueCounts(sqs, queueUrl);
          return q.visible + q.inFlight + q.delayed === 0;
        },
        'the queue to empty',
        30_000,
      );
    } finally {
      for (const t of timers) clearTimeout(t);
      for (const p of busy) p.kill('SIGKILL');
      proxy.setPlan({});
    }
    await worker.stop();
    expect(proxy.injected.delays).toBeGreaterThan(0);
    expect(proxy.injected.resets).toBeGreaterThan(0);
    expect(completions).toEqual([expect.objectContaining({ total: 12, succeeded: 10, failed: 2 })]);
    expect(events.count('job:dead-lettered')).toBe(2); // each malformed row ran once, however often its message came back
    const dead = await drain(sqs, dlqUrl);
    expect(dead.map((m) => m.MessageAttributes?.[ATTR_DLQ_REASON]?.StringValue)).toEqual(['unrecoverable', 'unrecoverable']);
    expect(dead.map((m) => JSON.parse(m.Body!).args.n).sort()).toEqual([11, 5]);
  }, 180_000);
});
