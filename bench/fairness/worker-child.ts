/**
 * One worker process of the fairness benchmark, started with the public API. Argument: JSON
 * WorkerSpec. Each handler works HANDLER_MS and appends one line to the effects log.
 * IPC to the parent: {type:'ready'}, {type:'progress', counts}, {type:'error', message}.
 * SIGTERM stops it gracefully (a second one aborts the open long polls).
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { createWorker, defineJob, type Worker } from '../../src/index.js';
import { EffectsWriter } from './effects.js';
import { HANDLER_MS, JOB_NAME, jobArgs } from './job.js';
import { fairnessOptions, type Mode } from './modes.js';
import { scenarios } from './scenarios.js';

export interface WorkerSpec {
  readonly mode: Mode;
  readonly scenarioId: string;
  readonly scale: number;
  readonly endpoint: string;
  /** Queue URLs by role, through the counting proxy. */
  readonly urls: Record<string, string>;
  readonly memcached: string;
  readonly effectsPath: string;
  readonly concurrency: number;
}

// A worker polling 20+ queues puts one abort listener per open poll on one signal: not a leak.
setMaxListeners(100);

const spec = JSON.parse(process.argv[2]!) as WorkerSpec;
const send = (m: object) => process.send?.(m);
const scenario = scenarios(spec.scale).find((s) => s.id === spec.scenarioId)!;
const effects = new EffectsWriter(spec.effectsPath);
const counts: Record<string, number> = {};

const setup = fairnessOptions(spec.mode, scenario);
const job = defineJob({
  name: JOB_NAME,
  args: jobArgs,
  ...(setup.rateLimit === undefined ? {} : { rateLimit: setup.rateLimit }),
  handle: async (_args, ctx) => {
    const start = Date.now();
    await sleep(HANDLER_MS);
    const key = ctx.tenant ?? '-';
    effects.add({
      key,
      jobId: ctx.jobId,
      enqueuedAt: ctx.enqueuedAt.getTime(),
      start,
      end: Date.now(),
      pid: process.pid,
      attempt: ctx.attempt,
    });
    counts[key] = (counts[key] ?? 0) + 1;
  },
});

let worker: Worker;
try {
  worker = createWorker(
    {
      ...setup.worker(spec.urls),
      jobs: [job],
      concurrency: spec.concurrency,
      endpoint: spec.endpoint,
      region: 'us-east-1',
      memcached: spec.memcached,
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
      handleSignals: true,
    },
    { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' },
  );
  await worker.start();
} catch (error) {
  send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}

const report = setInterval(() => {
  effects.flush();
  send({ type: 'progress', counts });
}, 250);

worker.on('stopped', () => {
  clearInterval(report);
  effects.flush();
  send({ type: 'progress', counts });
  setImmediate(() => process.exit(0));
});
send({ type: 'ready' });
