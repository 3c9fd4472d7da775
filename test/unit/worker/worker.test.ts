import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { encodeEnvelope, newJobId } from '../../../src/envelope.js';
import { UnrecoverableError } from '../../../src/errors.js';
import { defineJob } from '../../../src/job.js';
import { createWorker } from '../../../src/worker/worker.js';
import { MemoryQueue } from '../../helpers/memory-queue.js';
import { eventually } from '../../helpers/stack.js';

// The worker over an injected queue port: no server, no SDK. What SQS itself does is tested
// against the real servers (test/integration, test/contracts); this proves the port is the seam.
describe('a worker handed its own queue port', () => {
  it('runs, retries and dead-letters through the port alone', async () => {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    const url = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
    const seen: string[] = [];
    const job = defineJob({
      name: 'step',
      args: z.object({ n: z.number() }),
      backoff: { baseMs: 0, factor: 1, capMs: 0, jitter: 0 },
      handle: ({ n }, ctx) => {
        seen.push(`${n}@${ctx.attempt}`);
        if (n === 2 && ctx.attempt === 1) throw new Error('once');
        if (n === 3) throw new UnrecoverableError('never');
      },
    });
    const send = (n: number) =>
      memory.send(url, {
        body: encodeEnvelope({ v: 1, id: newJobId(), job: 'step', args: { n }, enqueuedAt: new Date().toISOString() }),
        attributes: {},
      });
    await Promise.all([send(1), send(2), send(3)]);
    const worker = createWorker(
      {
        queues: [url],
        jobs: [job],
        queue: memory,
        waitTimeSeconds: 0,
        deleteFlushMs: 0,
        handleSignals: false,
        logger: pino({ level: 'silent' }),
        metrics: { sink: 'off' },
      },
      {},
    );
    await worker.start();
    await eventually(
      async () => (await memory.receive(dlq, 10, 0, 0)).length === 1 && seen.includes('2@2'),
      'the retry and the dead letter',
    );
    await worker.stop();
    expect(seen.sort()).toEqual(['1@1', '2@1', '2@2', '3@1']);
    expect(await memory.receive(url, 10, 0, 30)).toHaveLength(0);
  });
});
