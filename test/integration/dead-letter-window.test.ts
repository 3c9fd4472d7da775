import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import type { OutgoingMessage } from '../../src/core/message.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, drain, eventually, freshQueues, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// Issue 17, 2: a copy of a job that meets the job being dead-lettered must run (or come back), never
// be deleted as "a copy of a running job" while the message that carried the job is deleted too.
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();

describe('a copy that arrives while its job is being dead-lettered', () => {
  it('runs: an operator replays the dead letter the moment it lands, before the worker has finished settling', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-window', { maxReceiveCount: 3 });
    const runs: string[] = [];
    const refused = defineJob({
      name: 'refused',
      args: z.object({}),
      handle: (_a, ctx) => {
        runs.push(ctx.messageId);
        throw new UnrecoverableError('refused');
      },
    });
    let replayed = false;
    let waitForCopy: () => Promise<unknown> = async () => {};
    // The real SQS adapter, paused right after the first DLQ send lands: the replay moves that dead
    // letter back, and the worker decides about the copy, while the first message is still settling.
    const queue = new (class extends SqsQueuePort {
      override async send(url: string, message: OutgoingMessage): Promise<{ messageId: string }> {
        const sent = await super.send(url, message);
        if (url !== dlqUrl || replayed) return sent;
        replayed = true;
        const replay = await replayDeadLetters(new SqsQueuePort(sqs), { dlqUrl, sourceQueueUrl: queueUrl, filter: { id: 'r-1' } });
        expect(replay.moved).toBe(1);
        await waitForCopy();
        return sent;
      }
    })(sqs, sqs);
    const worker = start({ queues: [queueUrl], jobs: [refused], concurrency: 4, queue });
    const events = recordEvents(worker);
    waitForCopy = () => eventually(() => events.count('job:duplicate') + events.count('job:start') >= 2, 'the copy to be decided');
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(refused, {}, { jobId: 'r-1' });
    producer.close();

    await eventually(() => events.count('job:dead-lettered') === 2, 'both messages dead-lettered');
    await worker.stop();
    expect(events.count('job:duplicate')).toBe(0); // before the fix: the copy was deleted as a duplicate
    expect(runs).toHaveLength(2);
    expect(new Set(runs).size).toBe(2); // the first message, then the replayed copy
    expect((await drain(sqs, dlqUrl)).map((m) => JSON.parse(m.Body!).id)).toEqual(['r-1']); // in the DLQ, not lost
  });
});
