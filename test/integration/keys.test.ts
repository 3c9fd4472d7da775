import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer, type Producer } from '../../src/producer/producer.js';
import { PrivateMemcached } from '../helpers/memcached.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { useWorkers } from '../helpers/worker.js';

/**
 * Keys on enqueue as a user runs them (LocalStack's SQS, DynamoDB Local, memcached): a debounced
 * burst runs once with its last args, across a memcached restart and a producer killed mid-burst;
 * maxWait bounds a burst that never goes quiet; throttle and singleton send one job among 4
 * producers racing, each with a client of its own.
 */
const sqs = sqsClient();
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `keys-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
let memcached: PrivateMemcached;
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

type Run = { jobId: string; doc: string; rev: number; at: number };
function indexJob(ran: Run[]) {
  return defineJob({
    name: 'index-document',
    args: z.object({ doc: z.string(), rev: z.number().int() }),
    handle: (args, ctx) => void ran.push({ jobId: ctx.jobId, ...args, at: Date.now() }),
  });
}
const producers = (queueUrl: string, job: ReturnType<typeof indexJob>, n: number): Producer[] =>
  Array.from({ length: n }, () => createProducer({ queueUrl, jobs: [job], store, memcached: memcached.servers }, ENV));

describe('debounce', () => {
  it('50 enqueues in 2 s from 2 producers run once, with the last args, on 2 workers; a memcached restart mid-burst changes nothing', async () => {
    const { queueUrl } = await freshQueues(sqs, 'debounce');
    const ran: Run[] = [];
    const job = indexJob(ran);
    const [a, b] = producers(queueUrl, job, 2);
    for (let n = 0; n < 2; n++)
      await start({ queues: [queueUrl], jobs: [job], store, memcached: memcached.servers, schedules: true }).start();
    const debounce = { key: `doc-${randomUUID()}`, delaySeconds: 3 };
    const ids = new Set<string>();
    const began = Date.now();
    for (let rev = 0; rev < 50; rev++) {
      if (rev === 25) {
        await memcached.stop();
        await memcached.restart();
      }
      ids.add((await (rev % 2 === 0 ? a! : b!).enqueue(job, { doc: 'saved', rev }, { debounce })).jobId);
      await sleep(Math.max(0, began + (rev + 1) * 40 - Date.now()));
    }
    const lastAt = Date.now();
    expect(lastAt - began).toBeLessThan(2_500);
    expect(ids.size).toBe(1);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 }); // kept until it goes quiet
    await eventually(() => ran.length > 0, 'the burst ran', 30_000);
    await sleep(4_000);
    a!.close();
    b!.close();
    expect(ran.map((r) => r.rev)).toEqual([49]);
    expect(ran[0]!.jobId).toBe([...ids][0]);
    expect(ran[0]!.at).toBeGreaterThanOrEqual(lastAt + 3_000 - 1_000); // not before a quiet delay (the last send took time too)
    console.log(`[keys] debounced run ${ran[0]!.at - lastAt} ms after the last enqueue (delay 3000 ms)`);
  }, 90_000);

  it('with maxWaitSeconds a burst that never goes quiet runs every maxWait, each run once and later args each time', async () => {
    const { queueUrl } = await freshQueues(sqs, 'debounce-max');
    const ran: Run[] = [];
    const job = indexJob(ran);
    const [p] = producers(queueUrl, job, 1);
    await start({ queues: [queueUrl], jobs: [job], store, memcached: memcached.servers, schedules: true }).start();
    const debounce = { key: `doc-${randomUUID()}`, delaySeconds: 3, maxWaitSeconds: 3 };
    const bursts = new Set<string>();
    const began = Date.now();
    for (let rev = 0; Date.now() - began < 10_000; rev++) {
      bursts.add((await p!.enqueue(job, { doc: 'typing', rev }, { debounce })).jobId);
      await sleep(100);
    }
    await eventually(() => ran.length >= bursts.size, 'every burst ran', 30_000);
    await sleep(2_000);
    p!.close();
    expect(bursts.size).toBeGreaterThanOrEqual(3); // 10 s of enqueues, a run at most every ~3 s
    expect(new Set(ran.map((r) => r.jobId))).toEqual(bursts);
    expect(ran).toHaveLength(bursts.size);
    const revs = ran.map((r) => r.rev);
    expect([...revs].sort((x, y) => x - y)).toEqual(revs);
    const gaps = ran.slice(1).map((r, i) => r.at - ran[i]!.at);
    console.log(`[keys] maxWait 3 s: ${ran.length} runs, gaps ${gaps.join(', ')} ms`);
  }, 90_000);

  it('a producer killed mid-burst: the last args it was told were kept run (or a later one it sent as it died)', async () => {
    const { queueUrl } = await freshQueues(sqs, 'debounce-kill');
    const ran: Run[] = [];
    const job = indexJob(ran);
    const key = `doc-${randomUUID()}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/debounce-producer.ts'], {
      env: { ...process.env, ...ENV, QUEUE_URL: queueUrl, JOB_TABLE: table, DYNAMODB_ENDPOINT: LOCAL_DYNAMODB, KEY: key },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acked = -1;
    child.stdout.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString().matchAll(/acked (\d+)/g)) acked = Number(m[1]);
    });
    await eventually(() => acked >= 20, 'the child enqueued 20', 30_000);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    await start({ queues: [queueUrl], jobs: [job], store, memcached: memcached.servers, schedules: true }).start();
    await eventually(() => ran.length > 0, 'the burst ran', 30_000);
    await sleep(3_000);
    expect(ran).toHaveLength(1);
    expect(ran[0]!.rev).toBeGreaterThanOrEqual(acked);
    expect(ran[0]!.rev).toBeLessThanOrEqual(acked + 1);
  }, 90_000);
});

describe('throttle and singleton under 4 producers at once', () => {
  it('throttle: 40 enqueues racing send one job; every answer names it; the next window sends one more', async () => {
    const { queueUrl } = await freshQueues(sqs, 'throttle');
    const job = indexJob([]);
    const ps = producers(queueUrl, job, 4);
    const throttle = { key: `acme-${randomUUID()}`, windowSeconds: 2 };
    const round = () =>
      Promise.all(ps.flatMap((p, n) => Array.from({ length: 10 }, (_, i) => p.enqueue(job, { doc: 'd', rev: n * 10 + i }, { throttle }))));
    const first = await round();
    expect(first.filter((r) => r.key === 'sent')).toHaveLength(1);
    expect(new Set(first.map((r) => r.jobId)).size).toBe(1);
    await sleep(2_100);
    const second = await round();
    expect(second.filter((r) => r.key === 'sent')).toHaveLength(1);
    expect(second[0]!.jobId).not.toBe(first[0]!.jobId);
    for (const p of ps) p.close();
    expect((await queueCounts(sqs, queueUrl)).visible).toBe(2);
  }, 60_000);

  it('singleton: 40 enqueues racing send one job; while it waits or runs none more; once it completed, one more', async () => {
    const { queueUrl } = await freshQueues(sqs, 'singleton');
    const ran: Run[] = [];
    const job = indexJob(ran);
    const ps = producers(queueUrl, job, 4);
    const singleton = { key: `doc-${randomUUID()}` };
    const round = () =>
      Promise.all(ps.flatMap((p, n) => Array.from({ length: 10 }, (_, i) => p.enqueue(job, { doc: 'd', rev: n * 10 + i }, { singleton }))));
    const first = await round();
    expect(first.filter((r) => r.key === 'sent')).toHaveLength(1);
    expect((await round()).filter((r) => r.key === 'sent')).toHaveLength(0); // it still waits
    await start({ queues: [queueUrl], jobs: [job], store, memcached: memcached.servers }).start();
    await eventually(() => ran.length === 1, 'it ran', 30_000);
    const producer = ps[0]!;
    await eventually(async () => (await producer.store?.get(first[0]!.jobId))?.state === 'completed', 'its record reads completed');
    const third = await round();
    expect(third.filter((r) => r.key === 'sent')).toHaveLength(1);
    await eventually(() => ran.length === 2, 'the next one ran', 30_000);
    for (const p of ps) p.close();
  }, 60_000);
});
