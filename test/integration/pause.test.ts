import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { run } from '../../src/cli/program.js';
import { defineJob } from '../../src/core/job.js';
import { createPauses } from '../../src/ops/wiring.js';
import { createProducer } from '../../src/producer/producer.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/**
 * Pauses as an operator makes them while workers run (LocalStack's SQS, DynamoDB Local, a memcached
 * of the file's own, so that it can be restarted): a job type paused while three workers run a
 * backlog, a paused queue, a pause that ends by itself, and a pause that outlives a memcached
 * restart and a worker restart. Pauses are kept per job store: each file has its own table.
 */
const sqs = sqsClient();
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `pause-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS, AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB };
let memcached: PrivateMemcached;
/** The workers' lockKeyPrefix (a test worker has a key space of its own by default): where pauses are told. */
const PREFIX = `pause-${randomUUID().slice(0, 6)}:`;
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
  memcached = await PrivateMemcached.start();
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await memcached.stop();
});
const start = useWorkers();

/** Jobs that record when each run started, by job id. */
function recorded(name: string, ms: number) {
  const starts: { jobId: string; at: number }[] = [];
  const job = defineJob({
    name,
    args: z.object({ n: z.number() }),
    handle: async (_args, ctx) => {
      starts.push({ jobId: ctx.jobId, at: Date.now() });
      await sleep(ms);
    },
  });
  return { job, starts };
}

/** Run the CLI in-process on this file's table (and, for pause/resume/pauses, its memcached and key prefix). */
async function cli(args: string[], told = true): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), env: ENV, signal: new AbortController().signal };
  const code = await run([...args, '--table', table, ...(told ? ['--memcached', memcached.servers, '--lock-key-prefix', PREFIX] : [])], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('pause and resume while workers run', () => {
  it('a paused job type starts nothing once seen, the others flow, nothing is dead-lettered, and a resume restarts it on every worker', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'pause-job', { maxReceiveCount: 2 });
    const charge = recorded('charge-invoice', 500);
    const mail = recorded('send-mail', 300);
    const jobs = [charge.job, mail.job];
    const producer = createProducer({ queueUrl, jobs }, ENV);
    await producer.enqueueMany(
      charge.job,
      Array.from({ length: 40 }, (_, n) => ({ n })),
    );
    await producer.enqueueMany(
      mail.job,
      Array.from({ length: 30 }, (_, n) => ({ n })),
    );
    producer.close();
    const pauses = createPauses({ store, memcached: memcached.servers, lockKeyPrefix: PREFIX }, ENV);
    const options = {
      queues: [queueUrl],
      jobs,
      store,
      memcached: memcached.servers,
      lockKeyPrefix: PREFIX,
      concurrency: 2,
      prefetch: 2,
      pausedDelaySeconds: 10,
    };
    const workers = [start(options), start(options), start(options)];
    const events = workers.map(recordEvents);
    await Promise.all(workers.map((w) => w.start()));
    await eventually(() => charge.starts.length >= 2, 'two charges started', 10_000);
    const { told } = await pauses.pause({ job: 'charge-invoice' }, { reason: 'payments API down', by: 'test' });
    expect(told).toBe(true);
    const seenBy = Date.now() + 2_000;
    // The others keep flowing: every mail runs while charge-invoice is paused.
    await eventually(() => new Set(mail.starts.map((s) => s.jobId)).size === 30, 'every mail ran', 30_000);
    await sleep(Math.max(0, seenBy - Date.now()) + 1_000);
    const before = charge.starts.length;
    expect(charge.starts.filter((s) => s.at > seenBy)).toEqual([]);
    expect(before).toBeLessThan(40);
    // Paused ones waited in the workers (held) or went back for a while (deferred), none dead-lettered.
    const paused = events.flatMap((e) => [...e.of('job:waiting'), ...e.of('job:deferred')]).filter((e) => e.limit === 'paused');
    // Held within each worker's free room (concurrency + prefetch), the rest handed back for a while.
    expect(paused.filter((e) => 'delaySeconds' in e).length).toBeGreaterThan(0);
    expect(paused.filter((e) => !('delaySeconds' in e)).length).toBeGreaterThan(0);
    expect(paused[0]?.reason).toContain('job "charge-invoice" is paused by test: payments API down');
    const resumedAt = Date.now();
    expect((await pauses.resume({ job: 'charge-invoice' })).resumed).toBe(true);
    // Those held start within 2 s of the resume, on every worker that held some; then every one runs, once.
    const held = events.map((e) => e.of('job:waiting').filter((w) => w.limit === 'paused').length);
    await eventually(() => charge.starts.length > before, 'a held charge started after the resume', 5_000);
    expect(charge.starts.find((s) => s.at >= resumedAt)!.at - resumedAt).toBeLessThan(2_000);
    await eventually(() => new Set(charge.starts.map((s) => s.jobId)).size === 40, 'every charge ran', 30_000);
    expect(charge.starts.length).toBe(40);
    // Every worker that held some started one within 2 s of the resume.
    const startedAt = new Map(charge.starts.map((s) => [s.jobId, s.at]));
    for (const [i, e] of events.entries()) {
      if (held[i]! === 0) continue;
      const after = e.of('job:start').flatMap((s) => (s.jobName === 'charge-invoice' ? [startedAt.get(s.jobId)!] : []));
      expect(Math.min(...after.filter((at) => at >= resumedAt)) - resumedAt).toBeLessThan(2_000);
    }
    expect(events.flatMap((e) => e.of('job:dead-lettered'))).toEqual([]);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(0);
    pauses.close();
  }, 90_000);

  it('a paused queue is not received from; `pause --for` resumes by itself; `pauses` lists who, why and until when', async () => {
    const { queueUrl } = await freshQueues(sqs, 'pause-queue');
    const report = recorded('report', 10);
    const paused = await cli(['pause', '--queue', queueUrl, '--for', '4s', '--reason', 'maintenance', '--by', 'ops']);
    expect(paused).toMatchObject({ code: 0, err: '' });
    expect(paused.out).toContain(`paused queue "${queueUrl.split('/').pop()}" until`);
    const listed = await cli(['pauses', '--json']);
    const views = JSON.parse(listed.out) as { what: string; by: string; reason: string; until: string; inForce: boolean }[];
    expect(views.find((v) => v.what.startsWith('queue'))).toMatchObject({ by: 'ops', reason: 'maintenance', inForce: true });
    // `stats` shows it beside the queue's figures.
    const stats = await cli(['stats', '--queue', queueUrl], false);
    expect(stats.out).toMatch(/Paused:\n.*queue "pause-queue[^"]*"\s+ops\s.*maintenance/s);
    const worker = start({ queues: [queueUrl], jobs: [report.job], store, memcached: memcached.servers, lockKeyPrefix: PREFIX });
    await worker.start();
    const producer = createProducer({ queueUrl, jobs: [report.job] }, ENV);
    await producer.enqueue(report.job, { n: 1 });
    producer.close();
    await sleep(1_500);
    // Not received: it is still visible in the queue, not held by the worker.
    expect(report.starts).toEqual([]);
    expect(await queueCounts(sqs, queueUrl)).toMatchObject({ visible: 1, inFlight: 0 });
    await eventually(() => report.starts.length === 1, 'the report ran once the pause ended', 15_000);
  }, 30_000);

  it('a pause outlives a memcached restart and a worker restart; bad input names the field and stores nothing', async () => {
    const { queueUrl } = await freshQueues(sqs, 'pause-restart');
    const sync = recorded('sync-tenant', 10);
    const producer = createProducer({ queueUrl, jobs: [sync.job] }, ENV);
    expect((await cli(['pause', '--job', 'sync-tenant', '--tenant', 'acme'])).code).toBe(0);
    await memcached.stop(); // the notice is gone: workers read the store
    await memcached.restart();
    const options = {
      queues: [queueUrl],
      jobs: [sync.job],
      store,
      memcached: memcached.servers,
      lockKeyPrefix: PREFIX,
      pausedDelaySeconds: 10,
    };
    let worker = start(options);
    await worker.start();
    const acme = await producer.enqueue(sync.job, { n: 1 }, { tenant: 'acme' });
    const other = await producer.enqueue(sync.job, { n: 2 }, { tenant: 'globex' });
    await eventually(() => sync.starts.length === 1, 'the other tenant ran', 10_000);
    expect(sync.starts.map((s) => s.jobId)).toEqual([other.jobId]);
    await worker.stop();
    worker = start(options);
    await worker.start();
    await sleep(2_000);
    expect(sync.starts.map((s) => s.jobId)).toEqual([other.jobId]);
    // Bad input: nothing stored.
    const before = (await cli(['pauses', '--json'])).out;
    const bad = await cli(['pause', '--job', 'sync tenant', '--for', '10x']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('--for "10x": must be whole units of d, h, m and s');
    const badJob = await cli(['pause', '--job', 'sync tenant']);
    expect(badJob.err).toContain('job "sync tenant": must be 1-80 characters');
    expect((await cli(['pauses', '--json'])).out).toBe(before);
    expect((await cli(['resume', '--job', 'sync-tenant', '--tenant', 'acme'])).out).toContain('resumed');
    await eventually(() => sync.starts.some((s) => s.jobId === acme.jobId), 'acme ran after the resume', 15_000);
    producer.close();
  }, 45_000);
});
