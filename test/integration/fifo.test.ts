import { setTimeout as sleepFor } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

describe('FIFO queues', () => {
  it('run one job per message group at a time, in order, with groups side by side; a failure blocks its group until it succeeds', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'order', { name: 'order.fifo', maxReceiveCount: 5 });
    const groups = ['g-a', 'g-b', 'g-c'];
    const perGroup = 6;
    const running = new Map<string, number>();
    let overlapsInGroup = 0;
    let mostAtOnce = 0;
    let atOnce = 0;
    const finished = new Map<string, number[]>(groups.map((g) => [g, []]));
    const failedOnce = new Set<string>();
    const job = defineJob({
      name: 'step',
      args: z.object({ group: z.string(), seq: z.number() }),
      backoff: { baseMs: 500, factor: 1, capMs: 500, jitter: 0 },
      handle: async ({ group, seq }) => {
        if ((running.get(group) ?? 0) > 0) overlapsInGroup++;
        running.set(group, (running.get(group) ?? 0) + 1);
        mostAtOnce = Math.max(mostAtOnce, ++atOnce);
        try {
          await sleepFor(60);
          // the third job of g-b fails once: g-b must wait for it, the other groups must not
          const key = `${group}/${seq}`;
          if (group === 'g-b' && seq === 2 && !failedOnce.has(key)) {
            failedOnce.add(key);
            throw new Error('transient failure');
          }
          finished.get(group)!.push(seq);
        } finally {
          running.set(group, running.get(group)! - 1);
          atOnce--;
        }
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    for (let seq = 0; seq < perGroup; seq++) {
      for (const group of groups) await producer.enqueue(job, { group, seq }, { jobId: `${group}-${seq}`, groupId: group });
    }
    const worker = start({ queues: [queueUrl], jobs: [job], concurrency: 10, visibilityTimeoutSeconds: 10 });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === groups.length * perGroup, 'every job to succeed', 40_000);
    await worker.stop();
    expect(overlapsInGroup).toBe(0);
    for (const g of groups) expect(finished.get(g)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(mostAtOnce).toBeGreaterThan(1); // groups ran side by side
    expect(events.count('job:failed')).toBe(1);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    expect(await queueCounts(sqs, dlqUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
    producer.close();
  });
});
