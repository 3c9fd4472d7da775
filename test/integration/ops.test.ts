import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob, type AnyJob } from '../../src/core/job.js';
import { listDeadLetters } from '../../src/ops/dlq-scan.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

const sqs = sqsClient();
afterAll(() => sqs.destroy());
const start = useWorkers();
const run = promisify(execFile);
/** The longest a CLI command may take here: one still running then is killed, and its test fails saying so. */
const CLI_LIMIT_MS = 25_000;
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    env: { ...process.env, ...LOCAL_ENV },
    timeout: CLI_LIMIT_MS,
    killSignal: 'SIGKILL',
  }).catch((error: unknown) => {
    if ((error as { killed?: boolean }).killed) throw new Error(`sqs-jobs ${args.join(' ')}: still running after ${CLI_LIMIT_MS / 1000} s`);
    throw error;
  });

const refund = defineJob({
  name: 'refund',
  args: z.object({ n: z.number() }),
  handle: (a) => Promise.reject(new UnrecoverableError(`refund ${a.n} refused`)),
});
const email = defineJob({
  name: 'email',
  args: z.object({ n: z.number() }),
  handle: (a) => Promise.reject(new UnrecoverableError(`email ${a.n} bounced`)),
});

/** Real dead letters: jobs that fail for good, run through a worker. */
async function deadLetters(queueUrl: string, jobs: { job: AnyJob; count: number }[]): Promise<void> {
  const producer = createProducer({ queueUrl }, LOCAL_ENV);
  let total = 0;
  for (const { job, count } of jobs) {
    await producer.enqueueMany(
      job,
      Array.from({ length: count }, (_, n) => ({ n })),
      { jobIds: Array.from({ length: count }, (_, n) => `${job.name}-${n}`), tenant: 'acme' },
    );
    total += count;
  }
  producer.close();
  // One receive out at a time: moto can hand one message to two receives made at the same moment
  // (seen under load, with receive counts 1 and 2). The worker hands the second copy back, its job
  // on its way to the DLQ, and it would turn up in the queue's counts a visibility timeout later.
  const worker = start({ queues: [queueUrl], jobs: jobs.map((j) => j.job), concurrency: 20, receiveConcurrency: 1 });
  const events = recordEvents(worker);
  await worker.start();
  // At least, then exactly: a job dead-lettered twice fails here by name, not by the test's timeout.
  await eventually(() => events.count('job:dead-lettered') >= total, `${total} dead letters`, 30_000);
  await worker.stop();
  expect(events.count('job:dead-lettered')).toBe(total);
}

/** The child's exit code; one still running after `ms` is killed, and the test fails saying so. */
async function exitOf(child: ChildProcess, ms: number): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  const code = await exited.finally(() => clearTimeout(timer));
  if (child.signalCode === 'SIGKILL') throw new Error(`the replay was still running ${ms / 1000} s after Ctrl-C`);
  return code;
}

const jobIdsIn = async (queueUrl: string) => (await drain(sqs, queueUrl)).map((m) => JSON.parse(m.Body!).id as string);
/**
 * A whole-queue replay from the CLI, moved client-side (send, then delete, 10 at a time, a line per
 * message) even where the server has message move tasks: a --limit makes the CLI move them itself.
 */
const clientSideReplay = (queueUrl: string) => ['src/cli/main.ts', 'dlq', 'replay', '--queue', queueUrl, '--limit', '1000'];
// Processes that get signals run as `node --import tsx`: the tsx command relays a signal to its child
// and sends it again (then SIGKILL) when the child has not acknowledged it within 30 ms, which a
// loaded machine misses: the CLI then sees a second Ctrl-C and exits 130.

describe('sqs-jobs dlq', () => {
  it('lists dead letters with job, id, tenant, attempt, reason and error, and leaves them in place', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-list');
    await deadLetters(queueUrl, [
      { job: refund, count: 2 },
      { job: email, count: 1 },
    ]);
    const letters = await listDeadLetters(new SqsQueuePort(sqs), dlqUrl);
    expect(letters).toHaveLength(3);
    expect(letters.find((l) => l.jobId === 'email-0')).toMatchObject({
      jobName: 'email',
      tenant: 'acme',
      receiveCount: 1,
      reason: 'unrecoverable',
      error: 'email 0 bounced',
      sourceQueueUrl: queueUrl,
    });
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(3); // peeked, then released
    const { stdout } = await cli(['dlq', 'list', '--queue', queueUrl]);
    expect(stdout).toMatch(/job\s+job id\s+tenant\s+attempt\s+reason\s+error/);
    expect(stdout).toMatch(/refund\s+refund-1\s+acme\s+1\s+unrecoverable\s+refund 1 refused/);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(3);
  });

  it('replays only the chosen jobs, keeping their job ids, and a dry run moves nothing', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-replay');
    await deadLetters(queueUrl, [
      { job: refund, count: 3 },
      { job: email, count: 2 },
    ]);
    const dry = JSON.parse((await cli(['dlq', 'replay', '--queue', queueUrl, '--job', 'refund', '--dry-run', '--json'])).stdout);
    expect(dry.moved).toBe(0);
    expect(dry.skipped).toHaveLength(3);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(5);

    const { stdout } = await cli(['dlq', 'replay', '--queue', queueUrl, '--job', 'refund']);
    expect(stdout).toMatch(/moved 3 message\(s\) \(send, then delete; replay /);
    const back = await drain(sqs, queueUrl);
    expect(back.map((m) => JSON.parse(m.Body!).id).sort()).toEqual(['refund-0', 'refund-1', 'refund-2']);
    expect(back[0]?.MessageAttributes?.['sqsjobs-job']?.StringValue).toBe('refund');
    expect(back[0]?.MessageAttributes?.['sqsjobs-dlq-reason']).toBeUndefined(); // our DLQ notes are not carried back
    expect((await jobIdsIn(dlqUrl)).sort()).toEqual(['email-0', 'email-1']);
  });

  it('replays one job by id, and at most --limit', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-id');
    await deadLetters(queueUrl, [{ job: email, count: 4 }]);
    const one = await replayDeadLetters(new SqsQueuePort(sqs), { dlqUrl, sourceQueueUrl: queueUrl, filter: { id: 'email-2' } });
    expect(one.moved).toBe(1);
    const two = await replayDeadLetters(new SqsQueuePort(sqs), { dlqUrl, sourceQueueUrl: queueUrl, limit: 2 });
    expect(two.moved).toBe(2);
    expect((await jobIdsIn(queueUrl)).length).toBe(3);
    expect((await jobIdsIn(dlqUrl)).length).toBe(1);
  });

  it('a whole-queue replay moves every message by send, then delete, on every server, without our DLQ or re-send notes', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-whole');
    await deadLetters(queueUrl, [{ job: refund, count: 12 }]);
    const { stdout } = await cli(['dlq', 'replay', '--queue', queueUrl]);
    expect(stdout).toMatch(/moved 12 message\(s\) \(send, then delete; replay [0-9a-f-]{36}\)/);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(0);
    const back = await drain(sqs, queueUrl);
    expect(back.map((m) => JSON.parse(m.Body!).id).sort()).toEqual(Array.from({ length: 12 }, (_, n) => `refund-${n}`).sort());
    for (const m of back) {
      expect(Object.keys(m.MessageAttributes ?? {}).sort()).toEqual(['sqsjobs-id', 'sqsjobs-job', 'sqsjobs-replay']);
      expect(m.Attributes?.ApproximateReceiveCount).toBe('1'); // a new message: its first receive
    }
  });

  it('an interrupted client-side replay run again leaves every message exactly once, in the queue or in the DLQ', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-interrupt');
    await deadLetters(queueUrl, [{ job: refund, count: 40 }]);
    const child = spawn(process.execPath, ['--import', 'tsx', ...clientSideReplay(queueUrl)], {
      env: { ...process.env, ...LOCAL_ENV },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let movedLines = 0;
    let interrupted = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('moved refund')) movedLines++;
      if (movedLines >= 1 && !interrupted) {
        interrupted = true;
        child.kill('SIGINT'); // Ctrl-C: the batch in hand finishes, nothing more starts
      }
    });
    const code = await exitOf(child, 15_000);
    expect(code).toBe(0);
    const afterFirst = await queueCounts(sqs, queueUrl);
    expect(afterFirst.visible).toBeGreaterThan(0);
    expect(afterFirst.visible).toBeLessThan(40); // it really stopped halfway
    expect(afterFirst.visible + (await queueCounts(sqs, dlqUrl)).visible).toBe(40);

    await cli(['dlq', 'replay', '--queue', queueUrl]); // the rest
    const ids = [...(await jobIdsIn(queueUrl)), ...(await jobIdsIn(dlqUrl))];
    expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, n) => `refund-${n}`).sort());
  });

  it('a client-side replay killed outright and run again loses nothing (at worst a copy in both places)', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-kill');
    await deadLetters(queueUrl, [{ job: refund, count: 30 }]);
    const child = spawn(process.execPath, ['--import', 'tsx', ...clientSideReplay(queueUrl)], {
      env: { ...process.env, ...LOCAL_ENV },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: child.stdout }).once('line', () => child.kill('SIGKILL'));
    await new Promise((resolve) => child.once('exit', resolve));
    await eventually(async () => (await queueCounts(sqs, dlqUrl)).inFlight === 0, 'held DLQ messages to come back', 70_000);
    await cli(['dlq', 'replay', '--queue', queueUrl]);
    const ids = new Set([...(await jobIdsIn(queueUrl)), ...(await jobIdsIn(dlqUrl))]);
    expect(ids.size).toBe(30);
  }, 120_000);

  it('purges only with --yes', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-purge');
    await deadLetters(queueUrl, [{ job: email, count: 2 }]);
    const refused = (await cli(['dlq', 'purge', '--queue', queueUrl]).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(refused.code).toBe(2); // a usage error, as docs/reference/cli.md says
    expect(refused.stderr).toMatch(/^sqs-jobs dlq purge: .*add --yes/);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(2);
    await cli(['dlq', 'purge', '--queue', queueUrl, '--yes']);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(0);
  });

  it('filters: list, replay and purge take --job, --error, --reason, --tenant, --older-than; a filtered purge deletes only those, each once', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dlq-filter');
    await deadLetters(queueUrl, [
      { job: email, count: 3 },
      { job: refund, count: 2 },
    ]);
    const listed = JSON.parse((await cli(['dlq', 'list', '--queue', queueUrl, '--error', 'BOUNCED', '--json'])).stdout) as {
      jobId: string;
    }[];
    expect(listed.map((l) => l.jobId).sort()).toEqual(['email-0', 'email-1', 'email-2']);
    const none = await cli(['dlq', 'list', '--queue', queueUrl, '--tenant', 'globex']);
    expect(none.stdout).toMatch(/shown 0 matching tenant=globex/);
    const bad = (await cli(['dlq', 'list', '--queue', queueUrl, '--older-than', 'soon']).catch((e: unknown) => e)) as {
      code: number;
      stderr: string;
    };
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--older-than: must be a whole number/);
    const dry = await cli(['dlq', 'purge', '--queue', queueUrl, '--job', 'refund', '--dry-run']);
    expect(dry.stdout).toMatch(/would delete 2 message\(s\) matching job=refund/);
    expect((await queueCounts(sqs, dlqUrl)).visible + (await queueCounts(sqs, dlqUrl)).inFlight).toBe(5);
    const refused = (await cli(['dlq', 'purge', '--queue', queueUrl, '--job', 'refund']).catch((e: unknown) => e)) as {
      code: number;
      stderr: string;
    };
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/matching job=refund: add --yes/);
    const done = await cli(['dlq', 'purge', '--queue', queueUrl, '--job', 'refund', '--reason', 'unrecoverable', '--yes']);
    expect(done.stdout).toMatch(/deleted 2 message\(s\)/);
    expect((await listDeadLetters(new SqsQueuePort(sqs), dlqUrl)).map((l) => l.jobName)).toEqual(['email', 'email', 'email']);
  });
});

describe('sqs-jobs stats', () => {
  it("shows queue and DLQ depth and per-job counts from the workers' metrics", async () => {
    const namespace = `SqsJobsStats/${randomUUID().slice(0, 8)}`;
    const { queueUrl } = await freshQueues(sqs, 'stats');
    const ok = defineJob({ name: 'ok', args: z.object({}), handle: () => {} });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(ok, [{}, {}, {}, {}]);
    await producer.enqueue(refund, { n: 1 });
    const worker = start({ queues: [queueUrl], jobs: [ok, refund], metrics: { sink: 'cloudwatch', namespace } });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 4 && events.count('job:dead-lettered') === 1, 'jobs to end');
    await worker.stop();
    await producer.enqueueMany(ok, [{}, {}]); // waiting, for the depth

    const { stdout } = await cli(['stats', '--queue', queueUrl, '--namespace', namespace, '--json']);
    const s = JSON.parse(stdout);
    expect(s.queues[0]).toMatchObject({ url: queueUrl, visible: 2, inFlight: 0, delayed: 0 });
    expect(s.queues[0].dlq).toMatchObject({ visible: 1 });
    const byJob = Object.fromEntries(s.jobs.map((j: { job: string }) => [j.job, j]));
    expect(byJob.ok.counts).toMatchObject({ Succeeded: 4, Failed: 0 });
    expect(byJob.refund.counts).toMatchObject({ Failed: 1, DeadLettered: 1 });
    expect(byJob.ok.startedPerMinute).toBeCloseTo(4 / 15, 5);
    expect(byJob.ok.processMs.average).toBeGreaterThanOrEqual(0);

    const text = (await cli(['stats', '--queue', queueUrl, '--namespace', namespace])).stdout;
    expect(text).toMatch(/queue\s+visible\s+in flight\s+delayed\s+oldest\s+sent\/min/);
    expect(text).toMatch(/ok\s+stats-\S+\s+0\.3\s+4\s+0/);
    producer.close();
  });
});
