/**
 * Schedules under load, for bench/schedules/occurrences.ts: N schedules in the job store (put with
 * createSchedules().upsert), `every` P seconds, their grids staggered over the period so that
 * occurrences come at an even rate (N × 60 / P a minute), for a window of W seconds; fired and run
 * by WORKERS workers started with `schedules: true`, in this process so that their SDK clients can
 * be counted (one SQS client and one DynamoDB client, shared by the workers).
 * Measured: lateness (handler start − the occurrence's time) of each occurrence's first run, and
 * every SQS and DynamoDB call and DynamoDB capacity unit from the window's start until every
 * occurrence has run (idle ticks and long polls included), per occurrence run.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import { createDynamoClient, createSqsClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { defineJob } from '../../src/core/job.js';
import { createQueues, createSchedules } from '../../src/ops/wiring.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { createWorker } from '../../src/worker/worker.js';
import { countedDynamo, countedSqs, percentile, type Units } from './counted.js';

export const ENV = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };
const WORKERS = 2;
/** From the schedules' put to the window's start: the puts take a few seconds on DynamoDB Local. */
const LEAD_S = 12;
/** After the window, the last occurrences are waited for this long at most. */
const DRAIN_S = 45;

export interface LoadSettings {
  readonly sqs: string;
  readonly dynamodb: string;
  readonly memcached: string;
  readonly schedules: number;
  readonly periodS: number;
  readonly windowS: number;
}

export interface LoadFigures {
  readonly perMinute: number;
  readonly schedules: number;
  readonly periodS: number;
  readonly windowS: number;
  readonly expected: number;
  readonly ran: number;
  /** Occurrences the schedules' records count as skipped (overlap, catch-up). */
  readonly skipped: number;
  /** Occurrences whose job started more than once. */
  readonly startedTwice: number;
  readonly latenessMs: { p50: number; p99: number; max: number };
  readonly sqs: Record<string, number>;
  readonly dynamo: Record<string, number>;
  readonly units: Units;
  /** DynamoDB's mean answer to an item call (ms): what the store's speed adds to lateness. */
  readonly dynamoMeanMs: number;
  /** From the window's start to the last occurrence's run. */
  readonly measuredS: number;
}

export async function runLoad(s: LoadSettings): Promise<LoadFigures> {
  const sqs = countedSqs(createSqsClient({ endpoint: s.sqs, region: 'us-east-1' }, {}, ENV));
  const dynamo = countedDynamo(createDynamoClient({ endpoint: s.dynamodb, region: 'us-east-1' }, {}, ENV));
  const plainDynamo = createDynamoClient({ endpoint: s.dynamodb, region: 'us-east-1' }, {}, ENV);
  const table = `bench-sched-load-${randomUUID().slice(0, 8)}`;
  await createJobTable(plainDynamo, table);
  const { queueUrl } = await createQueues(sqs.client, { name: `sched-load-${randomUUID().slice(0, 6)}`, visibilityTimeout: 30 });
  const store = new DynamoJobStore({ client: dynamo.client, table, ttlSeconds: 3_600 });
  const started = new Map<string, number[]>();
  const job = defineJob({
    name: 'tick',
    args: z.object({ i: z.number() }),
    handle: (_a, ctx) => void started.set(ctx.jobId, [...(started.get(ctx.jobId) ?? []), Date.now()]),
  });
  const prefix = `bench-sched-${randomUUID().slice(0, 6)}:`;
  const workers = Array.from({ length: WORKERS }, () =>
    createWorker(
      {
        queues: [queueUrl],
        jobs: [job],
        queue: new SqsQueuePort(sqs.client),
        store,
        schedules: true,
        memcached: s.memcached,
        lockKeyPrefix: prefix,
        concurrency: 50,
        waitTimeSeconds: 2,
        handleSignals: false,
        tracing: false,
        metrics: { sink: 'off' },
        logger: pino({ level: 'silent' }),
      },
      ENV,
    ),
  );
  await Promise.all(workers.map((w) => w.start()));

  // The schedules: N of them, `every` P s, schedule i's grid starting i × P / N s into the window.
  const t0 = Math.ceil(Date.now() / 1000) + LEAD_S;
  const endS = t0 + s.windowS - 1;
  const plainStore = new DynamoJobStore({ client: plainDynamo, table, ttlSeconds: 3_600 });
  const schedules = createSchedules({ store: plainStore, queueUrl }, ENV);
  // A window shorter than the period (--quick) puts only the schedules due in it: the rate stays.
  const offsets = Array.from({ length: s.schedules }, (_, i) => Math.floor((i * s.periodS) / s.schedules)).filter((o) => o < s.windowS);
  const ids = offsets.map((_, i) => `load-${i}`);
  const expectedIds = new Set<string>();
  ids.forEach((id, i) => {
    for (let at = t0 + offsets[i]!; at <= endS; at += s.periodS) expectedIds.add(`${id}:${at}`);
  });
  for (let i = 0; i < ids.length; i += 25)
    await Promise.all(
      ids.slice(i, i + 25).map((id, k) =>
        schedules.upsert(
          defineSchedule({
            id,
            job,
            args: { i: i + k },
            every: `${s.periodS}s`,
            start: new Date((t0 + offsets[i + k]!) * 1000),
            // Half a second past the last: a schedule whose only occurrence is its start still ends after it.
            end: new Date(endS * 1000 + 500),
          }),
        ),
      ),
    );
  if (Date.now() > t0 * 1000 - 500) console.error('[bench:schedules] load: the puts ran into the window; raise LEAD_S');
  await sleep(Math.max(0, t0 * 1000 - 200 - Date.now()));
  sqs.calls.reset();
  dynamo.reset();
  const ranAll = () => [...expectedIds].every((id) => started.has(id));
  while (!ranAll() && Date.now() < (endS + DRAIN_S) * 1000) await sleep(250);
  const measuredS = (Date.now() - t0 * 1000) / 1000;
  // The last runs' acks and status writes.
  await sleep(2_000);
  const calls = {
    sqs: sqs.calls.snapshot(),
    dynamo: dynamo.calls.snapshot(),
    units: { ...dynamo.units },
    dynamoMeanMs: dynamo.waited.ms / Math.max(1, dynamo.waited.calls),
  };
  await Promise.all(workers.map((w) => w.stop()));
  let skipped = 0;
  for (let i = 0; i < ids.length; i += 25)
    for (const r of await Promise.all(ids.slice(i, i + 25).map((id) => plainStore.schedules.getSchedule(id)))) skipped += r?.skipped ?? 0;
  schedules.close();
  store.close();
  plainStore.close();
  sqs.client.destroy();
  const lateness = [...expectedIds].flatMap((id) => {
    const at = started.get(id);
    return at === undefined ? [] : [at[0]! - Number(id.slice(id.lastIndexOf(':') + 1)) * 1000];
  });
  return {
    perMinute: (s.schedules * 60) / s.periodS,
    schedules: ids.length,
    periodS: s.periodS,
    windowS: s.windowS,
    expected: expectedIds.size,
    ran: lateness.length,
    skipped,
    startedTwice: [...started.values()].filter((t) => t.length > 1).length,
    latenessMs: { p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: Math.max(...lateness) },
    ...calls,
    measuredS,
  };
}
