/**
 * The producers of one run, in their own process (or `of` processes, sharing the bursts) so a
 * burst does not delay the quiet tenants' timers in the parent. First the bursts, all of them,
 * before any worker runs (so a quiet job really is buried behind them; interleaved across keys,
 * chunks of 10, four at a time); then, from the t0 the parent gives, each quiet tenant sends one
 * job every `everyMs` until 'stop' (from the first process).
 * Everything goes through the public producer API with `tenant`.
 * IPC: {type:'filled', at} (or {type:'error', message}) → parent {type:'trickle', t0} → ... → parent 'stop' → {type:'sent', counts, failed}.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsQueuePort } from '../../src/adapters/index.js';
import { createProducer, defineJob, type Producer } from '../../src/index.js';
import { JOB_NAME, jobArgs } from './job.js';
import { fairnessOptions, type Mode } from './modes.js';
import { burstKeys, quietTenants, scenarios } from './scenarios.js';
import { ShardRouter } from './shard-router.js';

export interface ProducerSpec {
  readonly mode: Mode;
  readonly scenarioId: string;
  readonly scale: number;
  readonly endpoint: string;
  readonly urls: Record<string, string>;
  readonly runId: string;
  /** The workers' memcached: spillover allowances are shared there by every producer process. */
  readonly memcached: string;
  /** This process is producer `index` of `of`: it sends every `of`-th chunk of the bursts (and, the first, the trickle). */
  readonly index: number;
  readonly of: number;
}

/** Keys interleave by this many jobs: one SendMessageBatch each. */
const CHUNK = 10;
const SENDERS = 4;

const spec = JSON.parse(process.argv[2]!) as ProducerSpec;
const send = (m: object) => process.send?.(m);
const scenario = scenarios(spec.scale).find((s) => s.id === spec.scenarioId)!;
const setup = fairnessOptions(spec.mode, scenario);
const sqs = new SQSClient({ endpoint: spec.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const router = new ShardRouter(setup.route, spec.urls, sqs);
const job = defineJob({ name: JOB_NAME, args: jobArgs, handle: () => {} });
const producers = new Map<string, Producer>();
const producerFor = (queueUrl: string) => {
  let p = producers.get(queueUrl);
  if (p === undefined) {
    const spillover =
      setup.producer === undefined ? {} : { ...setup.producer(spec.urls), memcached: spec.memcached, lockKeyPrefix: `fair-${spec.runId}:` };
    p = createProducer({ ...spillover, queueUrl, queue: new SqsQueuePort(sqs), jobs: [job] });
    producers.set(queueUrl, p);
  }
  return p;
};

const counts: Record<string, number> = {};
let failed = 0;
let seq = 0;

async function sendJobs(key: string, n: number): Promise<void> {
  const first = seq;
  seq += n;
  try {
    const url = await router.queueFor(key, n);
    const args = Array.from({ length: n }, (_, i) => ({ seq: first + i }));
    const jobIds = args.map((a) => `${spec.runId}-${spec.index}-${key}-${a.seq}`);
    if (n === 1) await producerFor(url).enqueue(job, args[0]!, { tenant: key, jobId: jobIds[0]!, ...setup.enqueue(key) });
    else await producerFor(url).enqueueMany(job, args, { tenant: key, jobIds, ...setup.enqueue(key) });
    counts[key] = (counts[key] ?? 0) + n;
  } catch {
    failed += n;
  }
}

/** All bursts, chunk by chunk, keys interleaved, SENDERS chunks in flight. */
async function bursts(): Promise<void> {
  const queues = scenario.bursts.flatMap((b) => {
    const keys = burstKeys(b);
    return keys.map((key, i) => {
      const total = Math.floor(b.count / keys.length) + (i < b.count % keys.length ? 1 : 0);
      return { key, left: total };
    });
  });
  const chunks: { key: string; n: number }[] = [];
  while (queues.some((q) => q.left > 0)) {
    for (const q of queues) {
      if (q.left <= 0) continue;
      const n = Math.min(CHUNK, q.left);
      q.left -= n;
      chunks.push({ key: q.key, n });
    }
  }
  const mine = chunks.filter((_, i) => i % spec.of === spec.index);
  let next = 0;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (next < mine.length) {
        const c = mine[next++]!;
        await sendJobs(c.key, c.n);
      }
    }),
  );
}

let stopping = false;
const inFlight = new Set<Promise<void>>();
async function trickle(tenant: string, offsetMs: number, everyMs: number, t0: number): Promise<void> {
  for (let k = 0; !stopping; k++) {
    const wait = t0 + offsetMs + k * everyMs - Date.now();
    if (wait > 0) await sleep(wait);
    if (stopping) break;
    const p = sendJobs(tenant, 1).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
}

const messages = new Map<string, (m: { t0?: number }) => void>();
process.on('message', (m: { type?: string; t0?: number }) => messages.get(m.type ?? '')?.(m));
const next = (type: string) => new Promise<{ t0?: number }>((resolve) => messages.set(type, resolve));
try {
  producerFor(Object.values(spec.urls)[0]!); // the mode's producer options are valid, or say so now
} catch (error) {
  send({ type: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
}
const trickleStart = next('trickle');
const stopped = next('stop');
await bursts();
send({ type: 'filled', at: Date.now() });
const t0 = (await trickleStart).t0!;
const quiet = spec.index === 0 ? quietTenants(scenario) : [];
const trickles = quiet.map((t, i) => trickle(t, (i * scenario.trickle!.everyMs) / quiet.length, scenario.trickle!.everyMs, t0));
await stopped;
stopping = true;
await Promise.all(trickles);
await Promise.all(inFlight);
send({ type: 'sent', counts, failed });
sqs.destroy();
setImmediate(() => process.exit(0));
