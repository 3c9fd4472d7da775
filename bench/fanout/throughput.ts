/**
 * (b) Worker throughput with tracking on and off, alternating in one run: N no-op jobs on a fresh
 * queue, one in-process worker (concurrency 10, memcached dedupe on, metrics off), timed from
 * start() to the last job:succeeded. On: the jobs were enqueued with track: true (their waiting
 * writes happen at fill time, untimed) and the worker has the job store; off: neither.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { z } from 'zod';
import { built } from '../lib/built.js';
import { CREDENTIALS, EMQ, freshQueue, MEMCACHED, serverCpuMicros, waitFor } from './stack.js';

const { createProducer, createWorker, defineJob } = built;

export interface ThroughputRun {
  readonly mode: 'off' | 'on';
  readonly jobs: number;
  readonly seconds: number;
  readonly jobsPerSecond: number;
  /** The worker's process CPU per job, start() to the last job. */
  readonly workerCpuMicros: number;
  /** DynamoDB Local's CPU per job meanwhile (it shares the machine's cores with the worker). */
  readonly storeCpuMicros: number;
}

const noop = defineJob({ name: 'tp-noop', args: z.object({ n: z.number() }), handle: () => {} });
/** A job that does something: 20 ms of waiting (an API call, a query). */
const work = defineJob({ name: 'tp-work', args: z.object({ n: z.number() }), handle: () => sleep(20) });

export async function throughputRun(
  mode: 'off' | 'on',
  n: number,
  store: { table: string; endpoint: string },
  handler: 'noop' | 'work' = 'noop',
): Promise<ThroughputRun> {
  const job = handler === 'noop' ? noop : work;
  const queueUrl = await freshQueue(`tp-${mode}`);
  const producer = createProducer({ queueUrl, endpoint: EMQ, region: 'us-east-1', ...(mode === 'on' ? { store } : {}) }, CREDENTIALS);
  await producer.enqueueMany(
    job,
    Array.from({ length: n }, (_, i) => ({ n: i })),
    mode === 'on' ? { track: true } : {},
  );
  producer.close();
  const worker = createWorker(
    {
      queues: [queueUrl],
      jobs: [job],
      concurrency: 10,
      waitTimeSeconds: 1,
      endpoint: EMQ,
      region: 'us-east-1',
      memcached: MEMCACHED,
      lockKeyPrefix: `bf-tp-${Date.now().toString(36)}:`,
      metrics: { sink: 'off' },
      logger: pino({ level: 'silent' }),
      handleSignals: false,
      ...(mode === 'on' ? { store } : {}),
    },
    CREDENTIALS,
  );
  worker.on('error', (e) => console.error(`  worker error: ${e.message}`));
  let succeeded = 0;
  let lastAt = 0;
  worker.on('job:succeeded', () => {
    succeeded++;
    lastAt = performance.now();
  });
  const storeCpu = serverCpuMicros('dynamodb');
  const cpu = process.cpuUsage();
  const startedAt = performance.now();
  await worker.start();
  await waitFor(() => succeeded >= n, `${n} jobs (${mode})`, 600_000);
  const used = process.cpuUsage(cpu);
  const storeUsed = serverCpuMicros('dynamodb') - storeCpu;
  await worker.stop();
  const seconds = (lastAt - startedAt) / 1000;
  return {
    mode,
    jobs: n,
    seconds: Math.round(seconds * 100) / 100,
    jobsPerSecond: Math.round((n / seconds) * 10) / 10,
    workerCpuMicros: Math.round((used.user + used.system) / n),
    storeCpuMicros: Math.round(storeUsed / n),
  };
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** Rounds of off and on runs, and their medians. */
export interface ThroughputSummary {
  readonly runs: readonly ThroughputRun[];
  readonly offMedian: number;
  readonly onMedian: number;
  /** onMedian / offMedian: the goal's figure. */
  readonly ratio: number;
  readonly pairRatios: readonly number[];
  /** Median CPU per job (µs): the worker's process off and on, DynamoDB Local's on. */
  readonly cpu: { readonly workerOff: number; readonly workerOn: number; readonly storeOn: number };
}

/** `rounds` pairs of runs of `n` no-op jobs, off and on, alternating which goes first (a machine that speeds up or slows down favours neither). */
export async function throughputRounds(rounds: number, n: number, store: { table: string; endpoint: string }): Promise<ThroughputSummary> {
  const runs: ThroughputRun[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const r = await throughputRun(mode, n, store);
      runs.push(r);
      console.error(
        `  round ${round + 1} ${mode}: ${r.jobsPerSecond.toFixed(0)} jobs/s (${r.seconds.toFixed(1)} s), worker ${r.workerCpuMicros} µs CPU/job, DynamoDB Local ${r.storeCpuMicros} µs CPU/job`,
      );
    }
  }
  const of = (mode: 'off' | 'on', key: 'jobsPerSecond' | 'workerCpuMicros' | 'storeCpuMicros') =>
    median(runs.filter((r) => r.mode === mode).map((r) => r[key]));
  const pairRatios = Array.from({ length: rounds }, (_, i) => {
    const pair = runs.slice(i * 2, i * 2 + 2);
    return pair.find((r) => r.mode === 'on')!.jobsPerSecond / pair.find((r) => r.mode === 'off')!.jobsPerSecond;
  });
  const offMedian = of('off', 'jobsPerSecond');
  const onMedian = of('on', 'jobsPerSecond');
  return {
    runs,
    offMedian,
    onMedian,
    ratio: onMedian / offMedian,
    pairRatios,
    cpu: { workerOff: of('off', 'workerCpuMicros'), workerOn: of('on', 'workerCpuMicros'), storeOn: of('on', 'storeCpuMicros') },
  };
}
