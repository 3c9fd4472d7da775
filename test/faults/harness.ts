import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { QueuePair } from '../../src/ops/queues.js';
import { createQueues } from '../../src/ops/wiring.js';

/** ci: small enough for CI's time limit; full: the counts the suite is specified with. */
export const SCALE = process.env.FAULTS_SCALE === 'full' ? 'full' : 'ci';
export const pick = <T>(ci: T, full: T): T => (SCALE === 'full' ? full : ci);

export const ELASTICMQ = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9324';
export const MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11211';
export const sqs = new SQSClient({ endpoint: ELASTICMQ, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });

export async function freshPair(prefix: string, visibilityTimeout: number, maxReceiveCount = 10): Promise<QueuePair> {
  return createQueues(sqs, { name: `${prefix}-${randomUUID().slice(0, 8)}`, visibilityTimeout, maxReceiveCount });
}

export interface JobSpec {
  readonly id: string;
  readonly ms: number;
  readonly tenant?: string;
  /** The args' note (the batch key in the batch worker). */
  readonly note?: string;
}

/** Send envelopes straight to ElasticMQ, 10 per call, 16 calls at a time. */
export async function send(queueUrl: string, jobs: readonly JobSpec[]): Promise<void> {
  const calls: Promise<unknown>[] = [];
  for (let i = 0; i < jobs.length; i += 10) {
    const entries = jobs.slice(i, i + 10).map((j, k) => ({
      Id: String(k),
      MessageBody: JSON.stringify({
        v: 1,
        id: j.id,
        job: 'work',
        args: j.note === undefined ? { ms: j.ms } : { ms: j.ms, note: j.note },
        enqueuedAt: new Date().toISOString(),
        ...(j.tenant === undefined ? {} : { tenant: j.tenant }),
      }),
    }));
    calls.push(sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries })));
    if (calls.length >= 16) await Promise.all(calls.splice(0));
  }
  await Promise.all(calls);
}

export async function depth(queueUrl: string): Promise<{ visible: number; inFlight: number; delayed: number }> {
  const a =
    (
      await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      )
    ).Attributes ?? {};
  return {
    visible: Number(a.ApproximateNumberOfMessages),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed),
  };
}

/** Every message in a queue (DLQ), held so none is counted twice. */
export async function drainBodies(queueUrl: string): Promise<{ body: string; attributes: Record<string, string | undefined> }[]> {
  const all: { body: string; attributes: Record<string, string | undefined> }[] = [];
  for (;;) {
    const out = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 600,
        MessageAttributeNames: ['All'],
      }),
    );
    if (!out.Messages?.length) return all;
    for (const m of out.Messages) {
      all.push({
        body: m.Body ?? '',
        attributes: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue])),
      });
    }
  }
}

export function jobIdOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { id?: string }).id;
  } catch {
    return undefined;
  }
}

/** A workspace for one test: the effects log every worker appends to. */
export function workspace(name: string): { dir: string; effects: string; lost: string; lockPrefix: string } {
  const dir = `.local/faults/${name}-${Date.now().toString(36)}`;
  mkdirSync(dir, { recursive: true });
  const effects = `${dir}/effects.log`;
  writeFileSync(effects, '');
  return { dir, effects, lost: `${dir}/lost.log`, lockPrefix: `faults-${name}-${randomUUID().slice(0, 8)}:` };
}

/** The non-empty lines of a log a worker appends to (none when it was never written). */
export function logLines(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
}

/** When each job id's effect happened (epoch ms, one entry per run). */
export function runTimes(effects: string): Map<string, number[]> {
  const runs = new Map<string, number[]>();
  if (!existsSync(effects)) return runs;
  for (const line of readFileSync(effects, 'utf8').split('\n')) {
    if (!line) continue;
    const [id, at] = line.split(' ');
    runs.set(id!, [...(runs.get(id!) ?? []), Number(at)]);
  }
  return runs;
}

/** How many times each job id's effect happened. */
export function executions(effects: string): Map<string, number> {
  return new Map([...runTimes(effects)].map(([id, times]) => [id, times.length]));
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  readonly ready: Promise<void>;
}

/**
 * FAULTS_MIXED_FLEET=<tree>: every second worker process runs that tree's worker instead (a
 * checkout from before a change, its node_modules installed), so the fault tests run a fleet that
 * mixes old and new workers on each queue, as a rolling deploy does. The tree's
 * test/faults/worker-process.ts must take the same settings as this one.
 */
const MIXED_FLEET = process.env.FAULTS_MIXED_FLEET;
let spawned = 0;

export function spawnWorker(env: Record<string, string>, execArgv: string[] = []): WorkerProcess {
  const other = MIXED_FLEET !== undefined && spawned++ % 2 === 1 ? resolve(MIXED_FLEET) : undefined;
  // The other tree's worker runs there: the files this test shares with it are named from here.
  const shared =
    other === undefined ? env : Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('.local/') ? resolve(v) : v]));
  const child = fork(other === undefined ? 'test/faults/worker-process.ts' : `${other}/test/faults/worker-process.ts`, [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ENDPOINT: ELASTICMQ, MEMCACHED, ...shared },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...(other === undefined ? {} : { cwd: other }),
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => m.type === 'ready' && resolve());
    void exited.then((code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
  ready.catch(() => {});
  return { child, exited, ready };
}

/** SIGTERM and wait; SIGKILL if it will not go. */
export async function stopWorker(w: WorkerProcess, timeoutMs = 30_000): Promise<number | null> {
  if (w.child.exitCode !== null || w.child.signalCode !== null) return w.exited;
  w.child.kill('SIGTERM');
  const timer = setTimeout(() => w.child.kill('SIGKILL'), timeoutMs);
  const code = await w.exited;
  clearTimeout(timer);
  return code;
}

/** Wait until every job is accounted for: its effect seen, or it is in the DLQ, and the queue is empty. */
export async function settled(
  queueUrl: string,
  dlqUrl: string,
  ids: ReadonlySet<string>,
  effects: string,
  deadlineMs: number,
): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const q = await depth(queueUrl);
    const d = await depth(dlqUrl);
    const done = [...executions(effects).keys()].filter((id) => ids.has(id)).length;
    if (q.visible + q.inFlight + q.delayed === 0 && done + d.visible >= ids.size) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

export interface Report {
  readonly jobs: number;
  readonly completed: number;
  readonly deadLettered: number;
  readonly lost: number;
  readonly completedTwice: number;
  readonly [extra: string]: number | string;
}

/** Count outcomes per job id: completed (effect seen), dead-lettered, lost (neither), run twice. */
export async function account(
  ids: ReadonlySet<string>,
  effects: string,
  dlqUrl: string,
  extra: Record<string, number | string> = {},
): Promise<Report> {
  const runs = executions(effects);
  const letters = await drainBodies(dlqUrl);
  const dead = new Set(letters.map((m) => jobIdOf(m.body)).filter((id): id is string => id !== undefined));
  // Why each is there: the worker's reason, or 'redrive' (SQS moved it after maxReceiveCount receives).
  const reasons: Record<string, number> = {};
  for (const m of letters) {
    const reason = m.attributes['sqsjobs-dlq-reason'] ?? 'redrive';
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  let completed = 0;
  let twice = 0;
  let lost = 0;
  for (const id of ids) {
    const n = runs.get(id) ?? 0;
    if (n > 0) completed++;
    if (n > 1) twice++;
    if (n === 0 && !dead.has(id)) lost++;
  }
  const report: Report = {
    jobs: ids.size,
    completed,
    deadLettered: dead.size,
    lost,
    completedTwice: twice,
    scale: SCALE,
    ...(letters.length === 0 ? {} : { deadLetterReasons: JSON.stringify(reasons) }),
    ...extra,
  };
  record(report);
  return report;
}

/** Append a test's figures to .local/faults-report.json (read by the closing summary). */
function record(report: Report): void {
  const file = '.local/faults-report.json';
  const name = (globalThis as { __faultName?: string }).__faultName ?? 'unnamed';
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  all[name] = report;
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`[faults] ${name}: ${JSON.stringify(report)}`);
}

export function named(name: string): void {
  (globalThis as { __faultName?: string }).__faultName = name;
}

/**
 * SIGKILL one worker every `everyMs`, in turn, and start a new one with `env` in its place, until
 * the returned stop() is called; stop() resolves to the number of kills once the loop has ended.
 * `sooner`, looked at every 100 ms, kills before `everyMs` has passed when it says so (a run that
 * moves faster than the clock still gets its kills mid-run). `waitReady` false: the next kill
 * does not wait for the new worker to be ready (its start can take seconds on a loaded machine,
 * longer than a fast run lasts); the kills go to the workers in turn, started or not.
 */
export function killLoop(
  workers: WorkerProcess[],
  env: Record<string, string>,
  everyMs: number,
  sooner: () => boolean = () => false,
  waitReady = true,
  maxKills = Number.POSITIVE_INFINITY,
): { stop: () => Promise<number> } {
  let kills = 0;
  let killing = true;
  const loop = (async () => {
    // At most maxKills: on a slow machine the time-based loop would otherwise kill more the longer
    // the run takes, until an item's receives run out for no reason but the test's pace.
    while (killing && kills < maxKills) {
      const from = Date.now();
      while (killing && Date.now() - from < everyMs && !sooner()) await new Promise((r) => setTimeout(r, 100));
      if (!killing) break;
      const i = kills % workers.length;
      workers[i]!.child.kill('SIGKILL');
      await workers[i]!.exited;
      kills++;
      workers[i] = spawnWorker(env);
      if (waitReady) await workers[i]!.ready.catch(() => {});
      else workers[i]!.ready.catch(() => {}); // killed before it was ready, maybe: nothing to wait for
    }
  })();
  return {
    stop: async () => {
      killing = false;
      await loop;
      // Every worker started and able to stop on SIGTERM before the caller stops them.
      if (!waitReady) await Promise.all(workers.map((w) => w.ready.catch(() => {})));
      return kills;
    },
  };
}
