/**
 * One run: one scenario in one mode. Fresh queues, an optional sorter, two worker processes, one
 * producer process; stops the quiet trickle once the bursts are done, waits for every sent job to
 * run, stops everything it started, and reads the effects log. Bounded by a deadline.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DeleteQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createQueues } from '../../src/index.js';
import type { SqsProxy } from '../lib/sqs-proxy.js';
import { analyse, waitSeries, type RunFigures } from './analyse.js';
import { readEffects } from './effects.js';
import { fairnessOptions, type Mode } from './modes.js';
import { RATE_WINDOW_MS, type Scenario } from './scenarios.js';

export interface RunContext {
  readonly emq: string;
  readonly memcached: string;
  readonly direct: SQSClient;
  readonly proxies: { readonly worker: SqsProxy; readonly producer: SqsProxy; readonly sorter: SqsProxy };
  readonly scale: number;
  readonly resultsDir: string;
}

export interface RunResult {
  readonly scenario: string;
  readonly mode: Mode;
  readonly status: 'ok' | 'incomplete' | 'unavailable';
  readonly note?: string;
  readonly sent?: number;
  /** How long the producers took to send the bursts (before the workers started). */
  readonly fillMs?: number;
  readonly figures?: RunFigures;
  /** SQS calls per job run, by who made them, and the worker's calls by action. */
  readonly calls?: {
    readonly worker: number;
    readonly producer: number;
    readonly sorter: number;
    readonly workerByAction: Record<string, number>;
  };
  readonly series?: { key: string; t: number; wait: number }[];
}

const WORKERS = 2;
const CONCURRENCY = 10;
const isQuiet = (key: string) => /^q\d+$/.test(key);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Message = { type: string } & Record<string, unknown>;
function child(file: string, spec: object): { proc: ChildProcess; next: (type: string) => Promise<Message>; exited: Promise<void> } {
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [JSON.stringify(spec)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  const waiting: { types: string[]; resolve: (m: Message) => void }[] = [];
  proc.on('message', (m: Message) => {
    const i = waiting.findIndex((w) => w.types.includes(m.type));
    if (i !== -1) waiting.splice(i, 1)[0]!.resolve(m);
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const next = (types: string) =>
    Promise.race([
      new Promise<Message>((resolve) => waiting.push({ types: types.split('|'), resolve })),
      exited.then((): Message => ({ type: 'exit' })),
    ]);
  return { proc, next, exited };
}

/** SIGTERM, a second one after a moment (ends open long polls), SIGKILL if still there. */
async function stop(c: { proc: ChildProcess; exited: Promise<void> }): Promise<void> {
  if (c.proc.exitCode !== null) return;
  c.proc.kill('SIGTERM');
  await Promise.race([c.exited, sleep(500)]);
  if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
  await Promise.race([c.exited, sleep(15_000)]);
  if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  await c.exited;
}

let runSeq = 0;

export async function runOne(ctx: RunContext, scenario: Scenario, mode: Mode): Promise<RunResult> {
  const setup = fairnessOptions(mode, scenario);
  const runId = `${Date.now().toString(36)}${runSeq++}`;
  const pairs = await Promise.all(
    setup.queues.map((role) => createQueues(ctx.direct, { name: `fair-${runId}-${role}`, visibilityTimeout: 30, maxReceiveCount: 5 })),
  );
  const urlsVia = (p: SqsProxy) => Object.fromEntries(setup.queues.map((role, i) => [role, pairs[i]!.queueUrl.replace(ctx.emq, p.url)]));
  const effectsPath = `${ctx.resultsDir}/effects-${scenario.id}-${mode}.csv`;
  rmSync(effectsPath, { force: true });
  const started: { proc: ChildProcess; exited: Promise<void> }[] = [];
  try {
    const startSorter = async () => {
      if (setup.sorter === undefined) return;
      const sorter = child('./sorter-child.ts', {
        endpoint: ctx.proxies.sorter.url,
        urls: urlsVia(ctx.proxies.sorter),
        settings: setup.sorter,
      });
      started.push(sorter);
      await sorter.next('ready');
    };
    if (setup.sorter?.startsWith === 'producers') await startSorter();
    for (const p of Object.values(ctx.proxies)) p.resetCounts();
    const of = scenario.producers ?? 1;
    const producers = Array.from({ length: of }, (_, index) =>
      child('./producer-child.ts', {
        mode,
        scenarioId: scenario.id,
        scale: ctx.scale,
        endpoint: ctx.proxies.producer.url,
        urls: urlsVia(ctx.proxies.producer),
        runId,
        memcached: ctx.memcached,
        index,
        of,
      }),
    );
    started.push(...producers);
    const sentMessages = producers.map((p) => p.next('sent'));
    const fillStart = Date.now();
    // Every producer's answer is waited for from now: a message that comes before its waiter is dropped.
    const fills = producers.map((p) => p.next('filled|error'));
    let fillMs = 0;
    for (const fill of fills) {
      const filled = await fill;
      if (filled.type !== 'filled')
        return { scenario: scenario.id, mode, status: 'unavailable', note: String(filled.message ?? 'the producer exited') };
      fillMs = Math.max(fillMs, Number(filled.at) - fillStart);
    }

    // Only now the workers: every burst is in the queues (or, with a sorter, on its way) before the first job runs.
    if (setup.sorter?.startsWith === 'workers') await startSorter();
    const counts: Record<string, number>[] = [];
    const workers = Array.from({ length: WORKERS }, (_, i) => {
      const w = child('./worker-child.ts', {
        mode,
        scenarioId: scenario.id,
        scale: ctx.scale,
        endpoint: ctx.proxies.worker.url,
        urls: urlsVia(ctx.proxies.worker),
        memcached: ctx.memcached,
        effectsPath,
        concurrency: CONCURRENCY,
      });
      w.proc.on('message', (m: Message) => {
        if (m.type === 'progress') counts[i] = m.counts as Record<string, number>;
      });
      started.push(w);
      return w.next('ready|error');
    });
    for (const ready of workers) {
      const m = await ready;
      if (m.type !== 'ready')
        return { scenario: scenario.id, mode, status: 'unavailable', note: String(m.message ?? 'worker exited before it was ready') };
    }
    ctx.proxies.worker.resetCounts();
    const t0 = Date.now();
    for (const producer of producers) producer.proc.send({ type: 'trickle', t0 });
    const burstTotal = scenario.bursts.reduce((n, b) => n + b.count, 0);
    const deadline = t0 + 60_000 + burstTotal * 10 + (scenario.trickleOnlyMs ?? 0);
    const done = () => counts.reduce((n, c) => n + Object.values(c ?? {}).reduce((a, b) => a + b, 0), 0);
    const burstDone = () => counts.reduce((n, c) => n + Object.entries(c ?? {}).reduce((a, [k, v]) => a + (isQuiet(k) ? 0 : v), 0), 0);

    let status: RunResult['status'] = 'ok';
    const trickleOver = () =>
      scenario.trickleOnlyMs !== undefined ? Date.now() - t0 >= scenario.trickleOnlyMs : burstDone() >= burstTotal;
    while (!trickleOver() && Date.now() < deadline) await sleep(100);
    for (const producer of producers) producer.proc.send({ type: 'stop' });
    let sentTotal = 0;
    for (const sent of await Promise.all(sentMessages))
      sentTotal += Object.values((sent.counts ?? {}) as Record<string, number>).reduce((a, b) => a + b, 0);
    while (done() < sentTotal && Date.now() < deadline) await sleep(100);
    if (done() < sentTotal) status = 'incomplete';
    await sleep(300); // let the last deletes flush
    await Promise.all(started.map(stop));

    const effects = readEffects(effectsPath);
    const jobs = Math.max(1, effects.length);
    const perJob = (p: SqsProxy) => p.total() / jobs;
    return {
      scenario: scenario.id,
      mode,
      status,
      ...(status === 'incomplete' ? { note: `${done()} of ${sentTotal} jobs ran before the deadline` } : {}),
      sent: sentTotal,
      fillMs,
      figures: analyse(scenario, effects, t0, ctx.scale >= 0.5 ? 5_000 : 1_000, ctx.scale >= 0.5 ? RATE_WINDOW_MS : 2_000),
      calls: {
        worker: perJob(ctx.proxies.worker),
        producer: perJob(ctx.proxies.producer),
        sorter: perJob(ctx.proxies.sorter),
        workerByAction: ctx.proxies.worker.counts(),
      },
      series: waitSeries(scenario, effects, t0),
    };
  } finally {
    await Promise.all(started.map(stop));
    await Promise.all(
      pairs.flatMap((p) => [p.queueUrl, p.dlqUrl]).map((QueueUrl) => ctx.direct.send(new DeleteQueueCommand({ QueueUrl })).catch(() => {})),
    );
  }
}
