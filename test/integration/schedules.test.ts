import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createSchedules } from '../../src/ops/wiring.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { getJob } from '../../src/status/get-job.js';
import {
  LOCAL_DYNAMODB,
  LOCAL_ENDPOINT,
  LOCAL_ENV,
  drain,
  eventually,
  freshQueues,
  queueCounts,
  sleep,
  sqsClient,
} from '../helpers/stack.js';
import { useWorkers } from '../helpers/worker.js';

/**
 * Schedules as a user runs them: declared in a module and put by `sqs-jobs schedules sync`, read and
 * steered from the CLI, made at run time, and fired by real workers (LocalStack's SQS, DynamoDB
 * Local, memcached).
 */
const sqs = sqsClient();
const dynamo = createDynamoClient(
  { endpoint: LOCAL_DYNAMODB, region: 'us-east-1' },
  {},
  { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
);
const table = `sched-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
});
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
});
const start = useWorkers();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** `sqs-jobs` from this checkout, in a clean environment pointed at the local stack and the test's table. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const base = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...CREDENTIALS,
    AWS_ENDPOINT_URL: LOCAL_ENDPOINT,
    AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB,
    AWS_REGION: 'us-east-1',
    SQS_JOBS_JOB_TABLE: table,
  };
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: { ...base, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe('sqs-jobs schedules', () => {
  it('sync puts the declared schedules, idempotently; two syncs at once leave one each; a later version removes what it dropped', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-sync');
    const tag = `s${randomUUID().slice(0, 6)}`;
    const sync = (env: Record<string, string> = {}, dryRun = false) =>
      cli(
        [
          'schedules',
          'sync',
          '--jobs',
          'test/fixtures/schedule-jobs.ts',
          '--app',
          'billing',
          '--queue',
          queueUrl,
          ...(dryRun ? ['--dry-run'] : []),
        ],
        { SCHEDULE_TAG: tag, ...env },
      );
    // Two deploys syncing at once: both succeed; each schedule is created once.
    const [a, b] = await Promise.all([sync(), sync()]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    const said = `${a.stdout}\n${b.stdout}`;
    expect(said.match(new RegExp(`created  ${tag}\\.nightly`, 'g'))).toHaveLength(1);
    expect(said.match(new RegExp(`created  ${tag}\\.hourly`, 'g'))).toHaveLength(1);
    const again = await sync();
    expect(again.stdout).toContain(`unchanged  ${tag}.nightly`);
    expect(again.stdout).toContain('0 of 2 changed');
    const mine = async () =>
      (JSON.parse((await cli(['schedules', 'list', '--json'])).stdout) as { id: string; owner: string }[]).filter((s) =>
        s.id.startsWith(tag),
      );
    // A later version of the app declares only the nightly one: a dry run says so, and changes nothing.
    const dry = await sync({ SCHEDULE_SET: 'small' }, true);
    expect(dry.stdout).toContain(`would be removed  ${tag}.hourly`);
    expect(await mine()).toHaveLength(2);
    const smaller = await sync({ SCHEDULE_SET: 'small' });
    expect(smaller.stdout).toContain(`removed  ${tag}.hourly`);
    expect(await mine()).toEqual([expect.objectContaining({ id: `${tag}.nightly`, owner: 'app:billing' })]);
  });

  it('show, pause, resume, trigger and remove from the CLI; an unknown id exits 3', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-steer');
    const tag = `t${randomUUID().slice(0, 6)}`;
    const id = `${tag}.nightly`;
    expect(
      (
        await cli(['schedules', 'sync', '--jobs', 'test/fixtures/schedule-jobs.ts', '--app', 'steer', '--queue', queueUrl], {
          SCHEDULE_TAG: tag,
        })
      ).code,
    ).toBe(0);
    const show = await cli(['schedules', 'show', id]);
    expect(show.stdout).toMatch(/when {8}30 2 \* \* \* Europe\/Berlin/);
    expect(show.stdout).toMatch(/next \(UTC\) {2}\d{4}-\d\d-\d\dT0[01]:30:00\.000Z, /);
    expect((await cli(['schedules', 'pause', id])).stdout).toBe(`paused  ${id}\n`);
    expect(JSON.parse((await cli(['schedules', 'show', id, '--json'])).stdout)).toMatchObject({ id, paused: true });
    expect((await cli(['schedules', 'resume', id])).stdout).toBe(`resumed  ${id}\n`);
    const trigger = JSON.parse((await cli(['schedules', 'trigger', id, '--json'])).stdout) as { jobId: string };
    expect(trigger.jobId).toMatch(new RegExp(`^${id}:\\d{10}$`));
    const [message] = await drain(sqs, queueUrl);
    expect(JSON.parse(message!.Body!)).toMatchObject({ id: trigger.jobId, job: 'nightly-report', args: { team: 'all' } });
    expect((await cli(['job', trigger.jobId, '--json'])).stdout).toContain('"state":"waiting"');
    expect((await cli(['schedules', 'remove', id])).stdout).toBe(`removed  ${id}\n`);
    const missing = await cli(['schedules', 'show', id]);
    expect([missing.code, missing.stderr]).toEqual([3, expect.stringContaining(`no schedule ${id} in ${table}`)]);
  });
});

describe('schedules fired by workers', () => {
  it("overlap 'skip': an every-1s schedule whose job takes 2.5 s never runs two at once, and counts what it skipped", async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-skip');
    let running = 0;
    let most = 0;
    const ran: string[] = [];
    const slow = defineJob({
      name: 'slow-sync',
      args: z.object({}),
      handle: async (_args, ctx) => {
        most = Math.max(most, ++running);
        await sleep(2_500);
        running--;
        ran.push(ctx.jobId);
      },
    });
    const schedules = createSchedules({ store, queueUrl }, { ...LOCAL_ENV, ...CREDENTIALS });
    const id = `skip-${randomUUID().slice(0, 6)}`;
    await schedules.upsert(defineSchedule({ id, job: slow, args: {}, every: '1s' }));
    const workers = [0, 1].map(() => start({ queues: [queueUrl], jobs: [slow], store, schedules: true, visibilityTimeoutSeconds: 2 }));
    await Promise.all(workers.map((w) => w.start()));
    await eventually(async () => ran.length >= 3, 'three runs');
    expect(await schedules.pause(id)).toBe(true);
    await Promise.all(workers.map((w) => w.stop()));
    const view = (await schedules.get(id))!;
    schedules.close();
    // Never two at once, though it runs longer than its period (and its visibility timeout, which its
    // heartbeat extends). Its status says running; a run past the stale bound is held by the lock (test/unit/schedules/tick.test.ts).
    expect(most).toBe(1);
    expect(view.skipped).toBeGreaterThanOrEqual(ran.length); // about two skipped per run
    expect(new Set(ran).size).toBe(ran.length);
    for (const jobId of ran) expect(jobId).toMatch(new RegExp(`^${id}:\\d{10}$`));
  });

  it('every worker down 20 s: with allow each missed occurrence runs, once; with skip only the latest, the others counted; none from before its start', async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-down');
    const ran: string[] = [];
    const beat = defineJob({ name: 'beat', args: z.object({}), handle: (_args, ctx) => void ran.push(ctx.jobId) });
    const schedules = createSchedules({ store, queueUrl }, { ...LOCAL_ENV, ...CREDENTIALS });
    const run = randomUUID().slice(0, 6);
    const [each, latest, none] = [`each-${run}`, `latest-${run}`, `none-${run}`];
    const start0 = new Date(Math.ceil(Date.now() / 2_000) * 2_000);
    const every2s = (id: string, rules: Pick<Parameters<typeof defineSchedule>[0], 'overlap' | 'catchUp'>) =>
      defineSchedule({ id, job: beat, args: {}, every: '2s', start: start0, ...rules });
    await schedules.upsert(every2s(each, { overlap: 'allow' }));
    await schedules.upsert(every2s(latest, { overlap: 'skip' }));
    // 'none' drops only occurrences more than 60 s late: a 20 s gap is a slow tick, not downtime.
    await schedules.upsert(every2s(none, { overlap: 'allow', catchUp: 'none' }));
    const first = start({ queues: [queueUrl], jobs: [beat], store, schedules: true });
    await first.start();
    await eventually(() => [each, latest, none].every((id) => ran.some((j) => j.startsWith(`${id}:`))), 'each fired once');
    await first.stop();
    const downFrom = Date.now();
    await sleep(20_000);
    const second = start({ queues: [queueUrl], jobs: [beat], store, schedules: true });
    await second.start();
    const upAt = Date.now();
    await eventually(async () => ((await schedules.get(latest))?.skipped ?? 0) >= 8, 'the missed ones of skip counted');
    // allow's missed ones, sent together by the first tick, have all run.
    const upS = Math.floor(upAt / 1000);
    await eventually(
      () => [each, none].every((id) => ran.some((j) => j.startsWith(`${id}:`) && Number(j.slice(id.length + 1)) >= upS - 2)),
      'the missed ones of allow run',
    );
    await second.stop();
    const occurrences = (id: string) =>
      ran
        .filter((j) => j.startsWith(`${id}:`))
        .map((j) => Number(j.slice(id.length + 1)))
        .sort((a, b) => a - b);
    const gapless = (xs: number[]) => xs.every((x, i) => i === 0 || x - xs[i - 1]! === 2);
    for (const id of [each, none]) {
      const xs = occurrences(id);
      expect(gapless(xs), `${id}: ${xs.join(' ')}`).toBe(true); // every 2 s, none missing, none twice
      expect(xs.filter((x) => x * 1000 > downFrom && x * 1000 < upAt).length).toBeGreaterThanOrEqual(9);
    }
    const whileDown = occurrences(latest).filter((x) => x * 1000 > downFrom && x * 1000 < upAt);
    expect(whileDown.length).toBeLessThanOrEqual(1); // only the latest due when the second worker came
    expect(new Set(ran).size).toBe(ran.length);
    for (const j of ran) expect(Number(j.slice(j.lastIndexOf(':') + 1))).toBeGreaterThanOrEqual(start0.getTime() / 1000);
    schedules.close();
  }, 90_000);

  it("a message in EventBridge Scheduler's target shape, delivered twice, runs once under its occurrence's job id", async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-eb');
    const ran: string[] = [];
    const report = defineJob({ name: 'eb-report', args: z.object({ team: z.string() }), handle: (_a, ctx) => void ran.push(ctx.jobId) });
    // The schedule's Input, as EventBridge Scheduler sends it once it has put in the scheduled time.
    const body = JSON.stringify({
      v: 1,
      job: 'eb-report',
      args: { team: 'all' },
      schedule: 'nightly-report',
      scheduledAt: '2027-03-28T01:00:00Z',
      track: true,
    });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body })); // at least once: sometimes twice
    const worker = start({ queues: [queueUrl], jobs: [report], store });
    await worker.start();
    const jobId = `nightly-report:${Date.parse('2027-03-28T01:00:00Z') / 1000}`;
    await eventually(async () => (await getJob(jobId, store, { ...LOCAL_ENV, ...CREDENTIALS }))?.state === 'completed', 'completed');
    await eventually(async () => Object.values(await queueCounts(sqs, queueUrl)).every((n) => n === 0), 'both deleted');
    expect(ran).toEqual([jobId]);
  });

  // 1,000 in the full run; 250 in the Node 22/24 legs, which run two suites at once on this
  // machine's two cores (LocalStack and DynamoDB Local take several times as long a call there): the
  // same code fires them, on every Node.
  const TENANTS = process.env.SQS_JOBS_TEST_LEG === 'partial' ? 250 : 1_000;

  it(`${TENANTS.toLocaleString('en')} per-tenant schedules due in the same second: each fires once, as its own job`, async () => {
    const { queueUrl } = await freshQueues(sqs, 'sched-many');
    const seen = new Map<string, number>();
    const weekly = defineJob({
      name: 'tenant-digest',
      args: z.object({ tenant: z.string() }),
      handle: (_args, ctx) => void seen.set(ctx.jobId, (seen.get(ctx.jobId) ?? 0) + 1),
    });
    const schedules = createSchedules({ store, queueUrl }, { ...LOCAL_ENV, ...CREDENTIALS });
    const run = randomUUID().slice(0, 6);
    // All due in one second, about when the last is put (a put fires an occurrence up to 60 s before it).
    const at = Math.floor(Date.now() / 1000) + 2;
    const ids = Array.from({ length: TENANTS }, (_, i) => `t${i}-${run}:digest`);
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(
        ids
          .slice(i, i + 50)
          .map((id, j) =>
            schedules.upsert(
              defineSchedule({ id, job: weekly, args: { tenant: `t${i + j}` }, every: '7d', start: new Date(at * 1000), overlap: 'allow' }),
            ),
          ),
      );
    const workers = [0, 1].map(() => start({ queues: [queueUrl], jobs: [weekly], store, schedules: true, concurrency: 50 }));
    await Promise.all(workers.map((w) => w.start()));
    await eventually(async () => seen.size === ids.length, 'every schedule fired', 180_000);
    await sleep(2_000); // a second fire would show by now
    schedules.close();
    expect([...seen.keys()].sort()).toEqual(ids.map((id) => `${id}:${at}`).sort());
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 240_000);
});
