/**
 * A worker process for the fault suite. Each job appends "<job id> <epoch ms>" to EFFECTS_LOG when
 * its work is done (the "effect" a checker counts). Env: QUEUE_URL, ENDPOINT, MEMCACHED, LOCK_PREFIX,
 * EFFECTS_LOG, CONCURRENCY, VISIBILITY, HEARTBEAT_MS, LOCK_TIMEOUT_MS (default 200), CAPS (JSON: tenant caps), LOCK_LOG (jobs whose claim found
 * memcached unreachable), LOST_LOG (leases lost), TRACE_LOG (every job event), plus REPORT_HEAP=1 for the soak run.
 * With BATCH_MAX_SIZE, "work" is a batch job (key: the tenant; maxWaitMs from BATCH_WAIT_MS): each
 * batch sleeps its longest item's ms, then appends every item's effect line in one write
 * (BATCH_EXCLUSIVE=1: one flush per key across the fleet; FLUSH_LOG: a line per handler call).
 * With CAPS, the effect line also says the tenant and how many of its jobs ran in this process at once.
 * With FANOUT=1, the jobs are bench/fanout/jobs.ts's fan-out (job store: JOB_TABLE on DYNAMODB_ENDPOINT):
 *   fan-parent appends "<id>#start <ms> <attempt> <pid> <cursor>" as it starts (cursor: fanOut.sent
 *   then) and "<id>#fanned <ms> <attempt> <pid>" once every child is sent; fan-child appends
 *   "<id> <ms>" after its 2-10 ms of work (then throws UnrecoverableError when its args say fail);
 *   fan-done appends "<id> <ms> <args as JSON>".
 * With SCHEDULES=1, the worker fires the schedules in JOB_TABLE (on DYNAMODB_ENDPOINT) whose job it has.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import { childArgsOf, fanOutJobs } from '../../bench/fanout/jobs.js';
import { createWorker, defineBatchJob, defineJob, type JobInfo, JobStatusReader, UnrecoverableError } from '../../src/index.js';
import type { AnyDefinition } from '../../src/core/job.js';

const env = process.env;
const args = z.object({ ms: z.number().int().min(0).max(60_000), note: z.string().max(1_000).optional() });
const single = defineJob({
  name: 'work',
  args,
  handle: async (a, ctx) => {
    if (a.ms > 0) await sleep(a.ms, undefined, { signal: ctx.signal });
    appendFileSync(env.EFFECTS_LOG!, `${ctx.jobId} ${Date.now()}\n`);
  },
});
const batched = env.BATCH_MAX_SIZE
  ? defineBatchJob({
      name: 'work',
      args,
      key: (a) => a.note ?? 'all',
      maxSize: Number(env.BATCH_MAX_SIZE),
      maxWaitMs: Number(env.BATCH_WAIT_MS ?? 500),
      exclusive: env.BATCH_EXCLUSIVE === '1',
      handle: async (items, ctx) => {
        const started = Date.now();
        const ms = Math.max(...items.map((i) => i.args.ms));
        if (ms > 0) await sleep(ms, undefined, { signal: ctx.signal });
        const now = Date.now();
        appendFileSync(env.EFFECTS_LOG!, items.map((i) => `${i.jobId} ${now}\n`).join(''));
        // FLUSH_LOG: one line per handler call, "<key> <start ms> <end ms> <pid>", to check exclusive keys.
        if (env.FLUSH_LOG) appendFileSync(env.FLUSH_LOG, `${ctx.key} ${started} ${now} ${process.pid}\n`);
      },
    })
  : undefined;
const work = batched ?? single;

/** FANOUT=1: the chaos fan-out's parent, children and completion, tracked in JOB_TABLE. */
function fanOutMode(): { jobs: AnyDefinition[]; store: { table: string; endpoint: string } } {
  const store = { table: env.JOB_TABLE!, endpoint: env.DYNAMODB_ENDPOINT ?? 'http://127.0.0.1:4569' };
  const reader = new JobStatusReader(store, { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' });
  const log = (line: string) => appendFileSync(env.EFFECTS_LOG!, `${line}\n`);
  const jobs = fanOutJobs({
    parent: async (a, ctx, { child, done }) => {
      const view = await reader.get(ctx.jobId);
      const cursor = view !== undefined && view.state !== 'unknown' ? (view.fanOut?.sent ?? 0) : -1;
      log(`${ctx.jobId}#start ${Date.now()} ${ctx.attempt} ${process.pid} ${cursor}`);
      const argsList = Array.from({ length: a.children }, (_, i) => childArgsOf(i));
      const result = await ctx.fanOut(child, argsList, { onComplete: { job: done, args: { tag: a.tag } }, chunkSize: a.chunkSize });
      log(`${ctx.jobId}#fanned ${Date.now()} ${ctx.attempt} ${process.pid}`);
      return result;
    },
    child: async (a, ctx) => {
      if (a.ms > 0) await sleep(a.ms, undefined, { signal: ctx.signal });
      log(`${ctx.jobId} ${Date.now()}`);
      if (a.fail) throw new UnrecoverableError(`child ${a.i} fails for good`);
    },
    done: async (a, ctx) => {
      log(`${ctx.jobId} ${Date.now()} ${JSON.stringify(a)}`);
    },
  });
  return { jobs: [jobs.parent, jobs.child, jobs.done], store };
}
const fanOut = env.FANOUT === '1' ? fanOutMode() : undefined;
const scheduled =
  env.SCHEDULES === '1'
    ? { store: { table: env.JOB_TABLE!, endpoint: env.DYNAMODB_ENDPOINT ?? 'http://127.0.0.1:4569' }, schedules: true }
    : {};

const worker = createWorker(
  {
    queues: [env.QUEUE_URL!],
    jobs: fanOut?.jobs ?? [work],
    ...(fanOut === undefined ? {} : { store: fanOut.store }),
    ...scheduled,
    concurrency: Number(env.CONCURRENCY ?? 10),
    visibilityTimeoutSeconds: Number(env.VISIBILITY ?? 5),
    ...(env.HEARTBEAT_MS ? { heartbeatIntervalMs: Number(env.HEARTBEAT_MS) } : {}),
    waitTimeSeconds: 2,
    ...(env.RECEIVE_CONCURRENCY ? { receiveConcurrency: Number(env.RECEIVE_CONCURRENCY) } : {}),
    shutdownTimeoutMs: 10_000,
    endpoint: env.ENDPOINT!,
    region: 'us-east-1',
    memcached: env.MEMCACHED!,
    lockKeyPrefix: env.LOCK_PREFIX!,
    lockTimeoutMs: Number(env.LOCK_TIMEOUT_MS ?? 200),
    metrics: { sink: 'off' },
    logger: pino({ level: env.WORKER_LOG_LEVEL ?? 'silent' }),
    handleSignals: true,
    ...(env.CAPS ? { tenantCaps: JSON.parse(env.CAPS) as Record<string, number>, capDelaySeconds: 1 } : {}),
  },
  { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' },
);
let processed = 0;
worker.on('job:succeeded', () => processed++);
// LOCK_LOG: a line per job whose claim found memcached unreachable (it then runs without the lock).
const lockLog = env.LOCK_LOG;
if (lockLog) worker.on('job:lock-unavailable', (info) => appendFileSync(lockLog, `${info.jobId} ${Date.now()}\n`));
// LOST_LOG: a line per lease lost ("<job id> <epoch ms> <reason>"): the visibility ran out (a slow server) or the lock was taken.
const lostLog = env.LOST_LOG;
if (lostLog) worker.on('heartbeat:lost', (info) => appendFileSync(lostLog, `${info.jobId ?? '?'} ${Date.now()} ${info.reason}\n`));
// TRACE_LOG: a line per job event, "<epoch ms> <pid> <event> <job id> <attempt> <message id> <delay s or -> <reason>",
// to follow a job across kills (which receives each worker spent on it, and how).
const traceLog = env.TRACE_LOG;
if (traceLog) {
  const line = (event: string, i: Partial<JobInfo> & { reason?: string; state?: string; delaySeconds?: number }) =>
    appendFileSync(
      traceLog,
      `${Date.now()} ${process.pid} ${event} ${i.jobId} ${i.attempt} ${i.messageId} ${i.delaySeconds ?? '-'} ${(i.reason ?? i.state ?? '').replace(/\s+/g, '_')}\n`,
    );
  worker.on('job:start', (i) => line('job:start', i));
  worker.on('job:succeeded', (i) => line('job:succeeded', i));
  worker.on('job:failed', (i) => line('job:failed', { ...i, reason: i.error.message }));
  worker.on('job:dead-lettered', (i) => line('job:dead-lettered', i));
  worker.on('job:duplicate', (i) => line('job:duplicate', i));
  worker.on('job:handed-back', (i) => line('job:handed-back', i));
  worker.on('job:resent', (i) => line('job:resent', i));
  worker.on('job:deferred', (i) => line('job:deferred', i));
  worker.on('job:waiting', (i) => line('job:waiting', i));
  worker.on('heartbeat:lost', (i) => line('heartbeat:lost', i));
}
worker.on('stopped', () => setImmediate(() => process.exit(0)));
await worker.start();
process.send?.({ type: 'ready' });

if (env.REPORT_HEAP === '1') {
  const every = Number(env.REPORT_EVERY ?? 1_000);
  let next = every;
  const timer = setInterval(() => {
    if (processed < next) return;
    next += every;
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ type: 'heap', processed, heapUsed: process.memoryUsage().heapUsed, at: performance.now() });
  }, 50);
  timer.unref();
}
