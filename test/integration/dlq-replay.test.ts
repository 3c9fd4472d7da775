import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { listDeadLetters } from '../../src/ops/dlq-scan.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { createProducer } from '../../src/producer/producer.js';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// Replays with a worker running: a replayed job that fails again must not be moved again (issue 17, 1),
// and its retry budget starts again on every server (issue 17, 3).
const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const cli = (args: string[]) =>
  promisify(execFile)('node_modules/.bin/tsx', ['src/cli/main.ts', ...args], { env: { ...process.env, ...LOCAL_ENV } });

function alwaysBad(runs: Map<string, number[]>) {
  return defineJob({
    name: 'always-bad',
    args: z.object({}),
    handle: (_a, ctx) => {
      runs.set(ctx.jobId, [...(runs.get(ctx.jobId) ?? []), ctx.attempt]);
      throw new UnrecoverableError('always bad');
    },
  });
}

const idsIn = async (url: string) => (await drain(sqs, url, 2)).map((m) => JSON.parse(m.Body!).id as string).sort();

describe('dlq replay while a worker runs a job that keeps failing', () => {
  it('--id moves the dead letter once, prints it once, and stops; the job fails back into the DLQ and stays there', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'replay-loop', { maxReceiveCount: 3 });
    const runs = new Map<string, number[]>();
    const worker = start({ queues: [queueUrl], jobs: [alwaysBad(runs)] });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(alwaysBad(runs), {}, { jobId: 'bad-1' });
    producer.close();
    await eventually(() => events.count('job:dead-lettered') === 1, 'bad-1 dead-lettered');

    // --limit only so that the old looping replay fails this test instead of hanging it.
    const { stdout } = await cli(['dlq', 'replay', '--queue', queueUrl, '--id', 'bad-1', '--limit', '20']);
    expect(stdout.match(/^moved always-bad bad-1/gm)).toHaveLength(1);
    expect(stdout).toMatch(/moved 1 message\(s\)/);
    await eventually(() => events.count('job:dead-lettered') === 2, 'the replayed job to fail back into the DLQ');
    await eventually(async () => (await queueCounts(sqs, dlqUrl)).inFlight === 0, 'the replay to let go of the DLQ');
    await worker.stop();
    expect(runs.get('bad-1')).toEqual([1, 1]); // ran once more, as a fresh attempt
    expect(await idsIn(dlqUrl)).toEqual(['bad-1']); // in the DLQ, once: not lost, not doubled
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(0);
  });

  it('--job moves each of its dead letters once; a job dead-lettered meanwhile is not moved', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'replay-job', { maxReceiveCount: 3 });
    const runs = new Map<string, number[]>();
    const bad = alwaysBad(runs);
    const worker = start({ queues: [queueUrl], jobs: [bad], concurrency: 4 });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(bad, [{}, {}, {}], { jobIds: ['j-1', 'j-2', 'j-3'] });
    await eventually(() => events.count('job:dead-lettered') === 3, 'three dead letters');

    const result = await replayDeadLetters(new SqsQueuePort(sqs), {
      dlqUrl,
      sourceQueueUrl: queueUrl,
      filter: { job: 'always-bad' },
      limit: 50,
      // A new job fails into the DLQ while the replay runs: it was not there when the replay began.
      onMoved: (l) => {
        if (l.jobId === 'j-1') void producer.enqueue(bad, {}, { jobId: 'late-1' });
      },
    });
    expect(result.moved).toBe(3);
    await eventually(() => events.count('job:dead-lettered') === 7, 'the three replayed jobs and late-1 dead-lettered');
    await eventually(async () => (await queueCounts(sqs, dlqUrl)).inFlight === 0, 'the DLQ to settle');
    await worker.stop();
    producer.close();
    for (const id of ['j-1', 'j-2', 'j-3']) expect(runs.get(id)).toEqual([1, 1]);
    expect(runs.get('late-1')).toEqual([1]);
    expect(await idsIn(dlqUrl)).toEqual(['j-1', 'j-2', 'j-3', 'late-1']);
  });
});

describe("a replayed job's retry budget", () => {
  it('starts again: after listing the DLQ twice and a whole-queue replay it gets all its attempts, numbered from 1', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'replay-budget', { maxReceiveCount: 3 });
    const attempts: number[] = [];
    const flaky = defineJob({
      name: 'flaky',
      args: z.object({}),
      backoff: { baseMs: 0, jitter: 0 },
      handle: (_a, ctx) => {
        attempts.push(ctx.attempt);
        throw new Error('still down');
      },
    });
    const worker = start({ queues: [queueUrl], jobs: [flaky] });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueue(flaky, {}, { jobId: 'flaky-1' });
    producer.close();
    await eventually(() => events.count('job:dead-lettered') === 1, 'retries exhausted', 30_000);
    expect(attempts).toEqual([1, 2, 3]);

    // Listing receives each dead letter: it must not spend what the replayed job gets.
    expect(await listDeadLetters(new SqsQueuePort(sqs), dlqUrl)).toHaveLength(1);
    expect(await listDeadLetters(new SqsQueuePort(sqs), dlqUrl)).toHaveLength(1);
    const { stdout } = await cli(['dlq', 'replay', '--queue', queueUrl]);
    expect(stdout).toMatch(/moved 1 message\(s\)/);
    await eventually(() => events.count('job:dead-lettered') === 2, 'retries exhausted again', 30_000);
    await worker.stop();
    expect(attempts).toEqual([1, 2, 3, 1, 2, 3]);
    const [letter] = await listDeadLetters(new SqsQueuePort(sqs), dlqUrl);
    expect(letter).toMatchObject({ jobId: 'flaky-1', reason: 'retries-exhausted', receiveCount: 3 });
    expect(letter?.error).toMatch(/failed on attempt 3 of 3/);
  }, 60_000);
});

describe('dlq list', () => {
  it('says how many dead letters it could not show: held by someone, or past --limit', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'list-held', { maxReceiveCount: 3 });
    const runs = new Map<string, number[]>();
    const bad = alwaysBad(runs);
    const worker = start({ queues: [queueUrl], jobs: [bad] });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(bad, [{}, {}, {}, {}], { jobIds: ['h-1', 'h-2', 'h-3', 'h-4'] });
    producer.close();
    await eventually(() => events.count('job:dead-lettered') === 4, 'four dead letters');
    await worker.stop();
    // Someone else holds one of them (a consumer reading the DLQ, a replay in another terminal).
    const held = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 1, VisibilityTimeout: 60 }));
    expect(held.Messages).toHaveLength(1);
    const all = (await cli(['dlq', 'list', '--queue', queueUrl])).stdout;
    expect(all.match(/^always-bad\s+h-\d/gm)).toHaveLength(3);
    expect(all).toMatch(/shown 3 of about 4 in the DLQ; 1 in flight \(held by a consumer or a replay\), not listable now/);
    const limited = (await cli(['dlq', 'list', '--queue', queueUrl, '--limit', '2'])).stdout;
    expect(limited.match(/^always-bad\s+h-\d/gm)).toHaveLength(2);
    expect(limited).toMatch(/shown 2 of about 4 in the DLQ \(--limit 2\); 1 in flight/);
  });
});
