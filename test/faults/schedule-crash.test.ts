import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { storedSpec } from '../../src/schedules/stored.js';
import { tcpAnswers } from '../helpers/net.js';
import {
  account,
  freshPair,
  killLoop,
  logLines,
  named,
  pick,
  settled,
  spawnWorker,
  stopWorker,
  type WorkerProcess,
  workspace,
} from './harness.js';

const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4569';
/** The workers' (test/faults/worker-process.ts): DynamoDB Local keeps tables per access key. */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };

beforeAll(async () => {
  const url = new URL(DYNAMODB);
  if (!(await tcpAnswers(url.hostname, Number(url.port)))) {
    throw new Error(`the schedule fault test needs DynamoDB Local at ${DYNAMODB}: run it through scripts/faults.sh (which starts it)`);
  }
});

/*
 * An every-1s schedule fired by three worker processes, one SIGKILLed and restarted every few
 * seconds (while it ticks, sends, or runs an occurrence's job): each occurrence in the schedule's
 * window must run, under its own job id, and once, but for a handler killed after its effect and
 * before its run was recorded done (at-least-once), which is counted. No leader: every worker ticks.
 */
it('SIGKILLed workers under an every-1s schedule: every occurrence runs under its own id, none missing, none run twice but by a kill', async () => {
  named('schedule-crash');
  const seconds = pick(30, 60);
  const { queueUrl, dlqUrl } = await freshPair('sched-crash', 5);
  const ws = workspace('schedule-crash');
  const client = createDynamoClient({ endpoint: DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
  const table = `sched-crash-${randomUUID().slice(0, 8)}`;
  await createJobTable(client, table);
  const store = new DynamoJobStore({ client, table, ttlSeconds: 3_600 });
  const trace = `${ws.dir}/trace.log`;
  const env = {
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    TRACE_LOG: trace,
    LOCK_PREFIX: ws.lockPrefix,
    VISIBILITY: '5',
    SCHEDULES: '1',
    JOB_TABLE: table,
    DYNAMODB_ENDPOINT: DYNAMODB,
  };
  const workers: WorkerProcess[] = Array.from({ length: 3 }, () => spawnWorker(env));
  await Promise.all(workers.map((w) => w.ready));
  // The job as the workers define it (test/faults/worker-process.ts): 400 ms of work per occurrence.
  const work = defineJob({ name: 'work', args: z.object({ ms: z.number() }), handle: () => {} });
  const startS = Math.floor(Date.now() / 1000) + 2;
  const id = `tick-${randomUUID().slice(0, 6)}`;
  const def = defineSchedule({
    id,
    job: work,
    args: { ms: 400 },
    every: '1s',
    overlap: 'allow',
    start: new Date(startS * 1000),
    end: new Date((startS + seconds - 1) * 1000),
  });
  expect(await store.schedules.putSchedule({ id, owner: 'runtime', spec: storedSpec(def, queueUrl), next: startS })).toBe('created');
  const ids = new Set(Array.from({ length: seconds }, (_, i) => `${id}:${startS + i}`));

  const killer = killLoop(workers, env, pick(3_000, 4_000));
  while (Date.now() < (startS + seconds + 2) * 1000) await new Promise((r) => setTimeout(r, 500));
  const kills = await killer.stop();
  const done = await settled(queueUrl, dlqUrl, ids, ws.effects, pick(120_000, 300_000));
  const exitCodes = await Promise.all(workers.map((w) => stopWorker(w)));
  const stored = await store.schedules.getSchedule(id);
  store.close();
  // Reruns: an occurrence's job started more than once (its handler killed mid-run, or its effect made and its end not recorded).
  const starts = new Map<string, number>();
  for (const f of logLines(trace).map((l) => l.split(' ')))
    if (f[2] === 'job:start' && f[3] !== undefined) starts.set(f[3], (starts.get(f[3]) ?? 0) + 1);
  const reruns = [...starts.values()].filter((n) => n > 1).length;
  const strays = [...starts.keys()].filter((jobId) => !ids.has(jobId));
  const report = await account(ids, ws.effects, dlqUrl, { kills, workers: 3, occurrences: seconds, reruns, strays: strays.length });
  expect(kills).toBeGreaterThanOrEqual(pick(5, 12)); // the faults really happened
  expect(done).toBe(true);
  expect(exitCodes).toEqual([0, 0, 0]);
  expect(strays).toEqual([]); // nothing fired outside the schedule's window, under any other id
  expect(report.lost).toBe(0);
  expect(report.deadLettered).toBe(0);
  expect(report.completed).toBe(seconds);
  expect(report.completedTwice).toBeLessThanOrEqual(kills);
  expect(stored).toMatchObject({ next: undefined, lastFired: startS + seconds - 1, skipped: 0, claim: undefined });
}, 600_000);
