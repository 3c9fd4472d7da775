/**
 * One system's crash loop, for bench/schedules/occurrences.ts: an every-1s schedule (sqs-jobs:
 * defineSchedule in the job store, `overlap: 'allow'`, as BullMQ's scheduler has no overlap rule;
 * BullMQ: `queue.upsertJobScheduler(id, { every: 1000 })`), put once by this process, run by three
 * worker processes (crash-worker.ts) of which one is SIGKILLed every KILL_MS, in turn, and started
 * again, for a window of W seconds. Then, with no more kills, the stragglers are waited for (a
 * killed run comes back once its lease lapses) and the workers stopped with SIGTERM.
 * Counted per occurrence (each second of the window, by its time; BullMQ's by its slot):
 *   - missed: never run to its end; started but never ended is counted apart;
 *   - duplicates: started again when no run of it had been killed (a second run, or a second job);
 *   - reruns: started again after a run of it was killed (at-least-once, not a duplicate).
 * Lateness is the first start's, from the occurrence's time.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createDynamoClient, createSqsClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createQueues, createSchedules } from '../../src/ops/wiring.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { percentile } from './counted.js';
import { ENV } from './load.js';

export type System = 'sqs-jobs' | 'bullmq';
const WORKERS = 3;
const WORK_MS = 400;
/** The lease of a run, the same for both: sqs-jobs' visibility timeout, BullMQ's lock duration and stalled check. */
export const LEASE_S = 10;

export interface CrashSettings {
  readonly system: System;
  readonly windowS: number;
  readonly killEveryMs: number;
  readonly sqs: string;
  readonly dynamodb: string;
  readonly memcached: string;
  readonly redisPort: number;
}

export interface CrashFigures {
  readonly system: System;
  readonly occurrences: number;
  readonly kills: number;
  readonly ranOnce: number;
  readonly missed: number;
  readonly startedNotEnded: number;
  readonly duplicates: number;
  readonly reruns: number;
  /** Jobs run for an occurrence outside the window or off its grid. */
  readonly strays: number;
  readonly latenessMs: { p50: number; p99: number; max: number };
  readonly duplicateIds: string[];
  readonly missedIds: number[];
}

function spawn(env: Record<string, string>): { child: ChildProcess; ready: Promise<void>; exited: Promise<void> } {
  const child = fork('bench/schedules/crash-worker.ts', [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = new Promise<void>((r) => {
    child.on('message', (m: { type?: string }) => m.type === 'ready' && r());
    void exited.then(r);
  });
  return { child, ready, exited };
}

/** Put the schedule (once, as a deploy would) and say what each worker needs. */
async function setUp(s: CrashSettings, id: string, fromS: number, toS: number, log: string): Promise<Record<string, string>> {
  const common = { SYSTEM: s.system, LOG: log, WORK_MS: String(WORK_MS), LEASE_S: String(LEASE_S) };
  if (s.system === 'bullmq') {
    const { Queue } = await import('bullmq');
    const name = `sched-crash-${randomUUID().slice(0, 6)}`;
    const queue = new Queue(name, { connection: { host: '127.0.0.1', port: s.redisPort } });
    await queue.upsertJobScheduler(
      id,
      { every: 1_000, startDate: new Date(fromS * 1000), endDate: new Date(toS * 1000) },
      { name: 'work', data: { ms: WORK_MS } },
    );
    await queue.close();
    return { ...common, QUEUE_NAME: name, REDIS_PORT: String(s.redisPort) };
  }
  const sqs = createSqsClient({ endpoint: s.sqs, region: 'us-east-1' }, {}, ENV);
  const { queueUrl } = await createQueues(sqs, { name: `sched-crash-${randomUUID().slice(0, 6)}`, visibilityTimeout: LEASE_S });
  sqs.destroy();
  const dynamo = createDynamoClient({ endpoint: s.dynamodb, region: 'us-east-1' }, {}, ENV);
  const table = `bench-sched-crash-${randomUUID().slice(0, 8)}`;
  await createJobTable(dynamo, table);
  const store = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
  const schedules = createSchedules({ store, queueUrl }, ENV);
  // The job as the workers define it (crash-worker.ts).
  const work = defineJob({ name: 'work', args: z.object({ ms: z.number() }), handle: () => {} });
  await schedules.upsert(
    defineSchedule({
      id,
      job: work,
      args: { ms: WORK_MS },
      every: '1s',
      overlap: 'allow',
      start: new Date(fromS * 1000),
      end: new Date(toS * 1000),
    }),
  );
  schedules.close();
  store.close();
  return {
    ...common,
    QUEUE_URL: queueUrl,
    JOB_TABLE: table,
    DYNAMODB_ENDPOINT: s.dynamodb,
    SQS_ENDPOINT: s.sqs,
    MEMCACHED: s.memcached,
    LOCK_PREFIX: `bench-crash-${randomUUID().slice(0, 6)}:`,
  };
}

export async function crashLoop(s: CrashSettings): Promise<CrashFigures> {
  mkdirSync('.local/bench-schedules', { recursive: true });
  const log = `.local/bench-schedules/crash-${s.system}-${Date.now().toString(36)}.log`;
  writeFileSync(log, '');
  const fromS = Math.ceil(Date.now() / 1000) + 8;
  const toS = fromS + s.windowS - 1;
  const env = await setUp(s, `tick-${randomUUID().slice(0, 6)}`, fromS, toS, log);
  const workers = Array.from({ length: WORKERS }, () => spawn(env));
  await Promise.all(workers.map((w) => w.ready));
  // The loop: a worker SIGKILLed every killEveryMs, in turn, and a new one started in its place.
  const kills: { pid: number; at: number }[] = [];
  await sleep(Math.max(0, fromS * 1000 - Date.now()));
  while (Date.now() < (toS + 1) * 1000) {
    await sleep(s.killEveryMs);
    const i = kills.length % WORKERS;
    const w = workers[i]!;
    w.child.kill('SIGKILL');
    await w.exited;
    kills.push({ pid: w.child.pid!, at: Date.now() });
    workers[i] = spawn(env);
    await workers[i]!.ready;
  }
  // No more kills: wait for the killed runs to come back (a lease and a check at most), then stop.
  const occurrences = Array.from({ length: s.windowS }, (_, k) => fromS + k);
  const ended = () => new Set(lines(log).flatMap((f) => (f[0] === 'done' ? [Number(f[1])] : [])));
  const until = Date.now() + (LEASE_S * 2 + 10) * 1000;
  while (Date.now() < until && !occurrences.every((o) => ended().has(o))) await sleep(500);
  await sleep(2_000);
  await Promise.all(
    workers.map(async (w) => {
      w.child.kill('SIGTERM');
      const timer = setTimeout(() => w.child.kill('SIGKILL'), 15_000);
      await w.exited;
      clearTimeout(timer);
    }),
  );
  return count(s.system, lines(log), occurrences, kills);
}

function lines(log: string): string[][] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split(' '));
}

function count(system: System, log: string[][], occurrences: number[], kills: { pid: number; at: number }[]): CrashFigures {
  const killedAt = new Map(kills.map((k) => [String(k.pid), k.at]));
  type Run = { jobId: string; pid: string; at: number; due: number; done: boolean };
  const runs = new Map<number, Run[]>();
  for (const f of log) {
    const o = Number(f[1]);
    if (f[0] === 'start')
      runs.set(o, [...(runs.get(o) ?? []), { jobId: f[2]!, pid: f[3]!, at: Number(f[4]), due: Number(f[5]), done: false }]);
    if (f[0] === 'done') {
      const run = runs.get(o)?.find((r) => r.jobId === f[2] && r.pid === f[3] && !r.done);
      if (run !== undefined) run.done = true;
    }
  }
  const inWindow = new Set(occurrences);
  let ranOnce = 0;
  let duplicates = 0;
  let reruns = 0;
  let startedNotEnded = 0;
  const missedIds: number[] = [];
  const duplicateIds: string[] = [];
  const lateness: number[] = [];
  for (const o of occurrences) {
    const rs = (runs.get(o) ?? []).sort((a, b) => a.at - b.at);
    if (!rs.some((r) => r.done)) {
      missedIds.push(o);
      if (rs.length > 0) startedNotEnded++;
    }
    if (rs.length === 1) ranOnce++;
    if (rs.length > 0) lateness.push(rs[0]!.at - rs[0]!.due);
    // A later start is a rerun when an earlier run's process was killed between that run's start and it.
    for (let k = 1; k < rs.length; k++) {
      const killed = rs.slice(0, k).some((e) => {
        const at = killedAt.get(e.pid);
        return at !== undefined && at >= e.at && at <= rs[k]!.at;
      });
      if (killed) reruns++;
      else {
        duplicates++;
        duplicateIds.push(`${rs[k]!.jobId} (first ${rs[0]!.jobId})`);
      }
    }
  }
  return {
    system,
    occurrences: occurrences.length,
    kills: kills.length,
    ranOnce,
    missed: missedIds.length,
    startedNotEnded,
    duplicates,
    reruns,
    strays: [...runs.keys()].filter((o) => !inWindow.has(o)).length,
    latenessMs: { p50: percentile(lateness, 50), p99: percentile(lateness, 99), max: Math.max(...lateness) },
    duplicateIds,
    missedIds,
  };
}
