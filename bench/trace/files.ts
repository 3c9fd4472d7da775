/**
 * Which src/ files one message's life runs through, measured (not read): V8's precise coverage
 * with call counts, reset while the worker idles, then read after one message has been settled.
 * A success and a job dead-lettered by an UnrecoverableError, on the in-memory queue and lock (no
 * server: the adapters' own files do not show; the SDK's work is not ours). Run:
 *   node_modules/.bin/tsx bench/trace/files.ts
 * Background work that runs during the window anyway (the poller's idle receives, the heartbeat's
 * ticks) is listed apart: it is what any message passes through too.
 */
import { Session } from 'node:inspector/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { z } from 'zod';
import { createProducer, createWorker, defineJob, UnrecoverableError } from '../../src/index.js';
import { MemoryLock, MemoryQueue } from '../../src/testing/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

const job = defineJob({
  name: 'step',
  args: z.object({ fail: z.boolean() }),
  handle: ({ fail }) => {
    if (fail) throw new UnrecoverableError('bad input');
  },
});
const memory = new MemoryQueue();
const dlq = memory.create('trace-dlq');
const url = memory.create('trace', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
const worker = createWorker(
  {
    queues: [url],
    jobs: [job],
    queue: memory,
    lock: new MemoryLock(),
    waitTimeSeconds: 0,
    deleteFlushMs: 0,
    handleSignals: false,
    logger: pino({ level: 'silent' }),
    metrics: { sink: 'off' },
  },
  {},
);
const producer = createProducer({ queueUrl: url, jobs: [job], queue: memory }, {});
await worker.start();

type Coverage = { result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[] };
/** src/ files with a function that ran since the last call, and how many calls each. */
async function ran(): Promise<Map<string, number>> {
  const { result } = (await session.post('Profiler.takePreciseCoverage')) as unknown as Coverage;
  const files = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = relative(root, fileURLToPath(script.url));
    if (!file.startsWith('src/')) continue;
    const calls = script.functions.reduce((n, f) => n + (f.ranges[0]?.count ?? 0), 0);
    if (calls > 0) files.set(file, calls);
  }
  return files;
}

const settle = () => new Promise((r) => setTimeout(r, 300));
await settle();
await ran(); // reset
await settle();
const idle = await ran(); // what runs with no message at all
for (const fail of [false, true]) {
  await ran(); // reset
  await producer.enqueue(job, { fail });
  while (memory.peek(url).length > 0) await new Promise((r) => setTimeout(r, 5));
  await settle();
  const files = await ran();
  const own = [...files.keys()].filter((f) => !idle.has(f) && !f.startsWith('src/producer/') && !f.startsWith('src/testing/')).sort();
  console.log(
    `\n${fail ? 'dead-lettered (UnrecoverableError)' : 'succeeded'}: ${own.length} src/ files beyond the idle loop's ${idle.size}`,
  );
  for (const f of own) console.log(`  ${f.padEnd(40)} ${files.get(f)} call(s)`);
}
console.log(`\nidle loop (every message passes through it too): ${[...idle.keys()].sort().join(', ')}`);
await worker.stop();
producer.close();
session.disconnect();
