import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { runCliWorkerUntilEmpty } from '../helpers/worker-process.js';

/**
 * The `sqs-jobs` command as a user runs it (issue 9, items 5 and 8): per-command --help, --version,
 * unknown options named with their command, garbage configuration as CONFIG_INVALID; and the
 * commands keep working against the local stack. The exhaustive per-flag checks run in-process
 * in test/unit/cli.test.ts.
 */
const sqs = sqsClient();
afterAll(() => sqs.destroy());

/** A clean environment: nothing from the runner's SQS_JOBS_* or AWS_* leaks in. */
const baseEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
};

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<Result> {
  return new Promise((resolve) => {
    execFile('node_modules/.bin/tsx', ['src/cli/main.ts', ...args], { env: { ...baseEnv, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe.concurrent('sqs-jobs --help and --version', () => {
  it.each([
    [['worker', '--help'], 'sqs-jobs worker', /--concurrency <n>/],
    [['stats', '--help'], 'sqs-jobs stats', /--window <minutes>/],
    [['dlq', 'list', '--help'], 'sqs-jobs dlq list', /--limit <n>/],
    [['dlq', 'replay', '-h'], 'sqs-jobs dlq replay', /--dry-run/],
    [['queues', 'create', '-h'], 'sqs-jobs queues create', /--max-receive-count <n>/],
    [['help', 'enqueue'], 'sqs-jobs enqueue', /--job-id <id>/],
  ])('%j prints its own usage and exits 0', async (args, usage, flag) => {
    const r = await cli(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Usage: ${usage} [options]`);
    expect(r.stdout).toMatch(flag);
    expect(r.stderr).toBe('');
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const r = await cli(['--version']);
    expect([r.code, r.stdout.trim()]).toEqual([0, version]);
  });

  it('an unknown option names itself and its command, and exits non-zero', async () => {
    const r = await cli(['dlq', 'list', '--bogus']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^sqs-jobs dlq list: unknown option '--bogus'/);
    expect(r.stderr).toContain('sqs-jobs dlq list --help');
    expect(r.stdout).toBe('');
  });
});

describe.concurrent('sqs-jobs with garbage configuration', () => {
  it.each([
    ['--queue jobs', ['worker', '--jobs', 'handlers', '--queue', 'jobs'], {}, '--queue'],
    ['SQS_JOBS_QUEUE_URL=jobs', ['worker', '--jobs', 'handlers'], { SQS_JOBS_QUEUE_URL: 'jobs' }, 'SQS_JOBS_QUEUE_URL'],
    ['SQS_JOBS_QUEUE_URL=jobs (stats)', ['stats'], { SQS_JOBS_QUEUE_URL: 'jobs' }, 'SQS_JOBS_QUEUE_URL'],
    [
      '--concurrency 0',
      ['worker', '--jobs', 'handlers', '--queue', 'http://127.0.0.1:4566/123456789012/jobs', '--concurrency', '0'],
      {},
      '--concurrency',
    ],
  ])('%s: CONFIG_INVALID naming the setting, exit 1, no stack trace', async (_what, args, env, setting) => {
    const r = await cli(args, { ...LOCAL_ENV, ...env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^sqs-jobs: CONFIG_INVALID: .*${setting}: must`));
    expect(r.stderr).not.toMatch(/TypeError|ZodError|\n\s+at /);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('sqs-jobs commands keep working', () => {
  it('events create makes the topic, the subscriber queues and their subscriptions, and changes nothing the second time', async () => {
    const tag = randomUUID().slice(0, 8);
    const env = { ...LOCAL_ENV, EVENT_TAG: tag };
    const first = await cli(['events', 'create', '--jobs', 'test/fixtures/event-jobs.ts', '--visibility-timeout', '20'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`topic user-signed-up-${tag}: created`);
    expect(first.stdout).toContain(`user-signed-up-${tag} → welcome-${tag}: subscribed`);
    expect(first.stdout).toContain(`user-signed-up-${tag} → crm-sync-${tag}: subscribed`); // the queue name: . as -
    expect(first.stdout).toContain(`stock-moved-${tag}.fifo → ledger-${tag}.fifo: subscribed`); // FIFO topic and queue
    const again = await cli(['events', 'create', '--jobs', 'test/fixtures/event-jobs.ts', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    const made = JSON.parse(again.stdout) as { subscribers: { job: string; queueUrl: string }[]; changes: unknown[] };
    expect(made.changes).toEqual([]);
    expect(made.subscribers.map((s) => s.job).sort()).toEqual([`crm-sync.${tag}`, `ledger-${tag}`, `welcome-${tag}`]);
    const none = await cli(['events', 'create', '--jobs', 'handlers'], env);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('exports no job that runs on an event');
  });

  it('publish checks the payload, finds the topic by name and reaches each subscriber its filter lets through', async () => {
    const tag = randomUUID().slice(0, 8);
    const env = { ...LOCAL_ENV, EVENT_TAG: tag };
    const made = await cli(['events', 'create', '--jobs', 'test/fixtures/event-jobs.ts', '--json'], env);
    expect(made.code, made.stderr).toBe(0);
    const queues = Object.fromEntries(
      (JSON.parse(made.stdout) as { subscribers: { job: string; queueUrl: string }[] }).subscribers.map((s) => [s.job, s.queueUrl]),
    );
    const event = `user.signed-up.${tag}`;
    const bad = await cli(['publish', event, '--jobs', 'test/fixtures/event-jobs.ts', '--payload', '{"userId":7}'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/payload\.userId/);
    const unknown = await cli(['publish', 'no.such.event', '--jobs', 'test/fixtures/event-jobs.ts'], env);
    expect(unknown.stderr).toContain(`its events: stock.moved.${tag}, ${event}`);
    const pro = ['--jobs', 'test/fixtures/event-jobs.ts', '--payload', '{"userId":"u1"}', '--id', `e-${tag}`, '--attribute', 'plan=pro'];
    const sent = await cli(['publish', event, ...pro], env);
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ eventId: `e-${tag}` });
    const free = await cli(
      ['publish', event, '--jobs', 'test/fixtures/event-jobs.ts', '--payload', '{"userId":"u2"}', '--attribute', 'plan=free'],
      env,
    );
    expect(free.code, free.stderr).toBe(0);
    const welcome = queues[`welcome-${tag}`]!;
    const crm = queues[`crm-sync.${tag}`]!;
    const bodies = async (url: string) => (await drain(sqs, url)).map((m) => JSON.parse(m.Body ?? '{}') as { args: { userId: string } });
    await eventually(async () => (await queueCounts(sqs, welcome)).visible === 2, 'both events on the welcome queue');
    await eventually(async () => (await queueCounts(sqs, crm)).visible === 1, 'the pro event on the crm-sync queue');
    const fifo = ['publish', `stock.moved.${tag}`, '--jobs', 'test/fixtures/event-jobs.ts', '--payload', '{"sku":"s-1"}'];
    expect((await cli(fifo, env)).stderr).toContain('options.groupId: is required');
    const ordered = await cli([...fifo, '--group-id', 's-1'], env);
    expect(ordered.code, ordered.stderr).toBe(0);
    await eventually(async () => (await queueCounts(sqs, queues[`ledger-${tag}`]!)).visible === 1, 'the FIFO event on the ledger queue');
    // stats --jobs shows each event's subscribers and their depth (no queue URL needed).
    const shown = await cli(['stats', '--jobs', 'test/fixtures/event-jobs.ts'], { ...env, SQS_JOBS_QUEUE_URL: '' });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`${event.replaceAll('.', '\\.')}\\s+welcome-${tag}\\s+welcome-${tag}\\s+2\\s+0\\s+0`));
    expect(shown.stdout).toMatch(new RegExp(`crm-sync\\.${tag}\\s+crm-sync-${tag}\\s+1\\s+0\\s+0`));
    expect(shown.stdout).toMatch(new RegExp(`ledger-${tag}\\s+ledger-${tag}\\.fifo\\s+1\\s+0\\s+0`));
    expect((await bodies(welcome)).map((b) => b.args.userId).sort()).toEqual(['u1', 'u2']);
    // crm-sync subscribes with { plan: ['pro'] }: only u1 reaches it.
    expect((await bodies(crm)).map((b) => b.args.userId)).toEqual(['u1']);
  });

  it('enqueue sends a job that worker runs; SIGTERM stops the worker with exit 0', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cli-worker');
    const sent = await cli(
      [
        'enqueue',
        'send-welcome-email',
        '--jobs',
        'handlers',
        '--queue',
        queueUrl,
        '--args',
        '{"userId":"u1","failureRate":0}',
        '--job-id',
        'cli-1',
      ],
      LOCAL_ENV,
    );
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ jobId: 'cli-1' });
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(1);

    const { code, logs } = await runCliWorkerUntilEmpty(
      ['--jobs', 'handlers', '--queue', `${queueUrl}@2`, '--wait-time', '1', '--concurrency', '2'],
      { ...baseEnv, ...LOCAL_ENV, SQS_JOBS_METRICS: 'off', SQS_JOBS_LOG_LEVEL: 'info' },
      queueUrl,
    );
    expect(code, logs).toBe(0);
  });
});

describe('sqs-jobs stats in a namespace without data', () => {
  it('names the namespace it looked in and how to look elsewhere (--namespace)', async () => {
    const { queueUrl } = await freshQueues(sqs, 'cli-stats-empty');
    const namespace = `SqsJobsNothing/${randomUUID().slice(0, 8)}`;
    const r = await cli(['stats', '--queue', queueUrl, '--namespace', namespace, '--window', '1'], LOCAL_ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`no worker metrics in this window in namespace ${namespace}`);
    expect(r.stdout).toMatch(/pass it with --namespace/);
  });
});
