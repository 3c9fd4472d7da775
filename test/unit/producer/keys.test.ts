import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ValidationError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { createProducer, type Producer } from '../../../src/producer/producer.js';
import { MemoryJobStore } from '../../../src/testing/memory-job-store.js';
import { MemoryKeyValues } from '../../../src/testing/memory-key-values.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';
import { createWorker, type Worker } from '../../../src/worker/worker.js';
import { eventually } from '../../helpers/stack.js';
import { UNIT_WORKER } from '../../helpers/worker.js';

/* Keys on enqueue (singleton, throttle, debounce) on the in-memory store and queue: what each sends, refuses and runs. */

const ran: { jobId: string; doc: string; rev: number; at: number }[] = [];
let release: (() => void) | undefined;
const index = defineJob({
  name: 'index-document',
  args: z.object({ doc: z.string(), rev: z.number().int() }),
  handle: async (args, ctx) => {
    ran.push({ jobId: ctx.jobId, ...args, at: Date.now() });
    if (args.doc === 'slow') await new Promise<void>((r) => (release = r));
  },
});

const workers: Worker[] = [];
afterEach(async () => {
  release?.();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  ran.length = 0;
});

function setup() {
  const memory = new MemoryQueue();
  const url = memory.create('jobs', { deadLetterQueueUrl: memory.create('jobs-dlq'), maxReceiveCount: 5 });
  const store = new MemoryJobStore();
  const shared = new MemoryKeyValues(); // the workers' memcached: the dedupe lock and cancel marks
  const producer = (): Producer => createProducer({ queueUrl: url, jobs: [index], queue: memory, store, lock: new MemoryLock(shared) }, {});
  const worker = async (schedules = false) => {
    const w = createWorker(
      { queues: [url], jobs: [index], queue: memory, store, lock: new MemoryLock(shared), schedules, ...UNIT_WORKER },
      {},
    );
    workers.push(w);
    await w.start();
    return w;
  };
  return { memory, url, store, producer, worker };
}

describe('keys on enqueue: bad input', () => {
  it('is refused naming the field and the rule, before any call', async () => {
    const { producer } = setup();
    const p = producer();
    const args = { doc: 'd', rev: 1 };
    const refused = async (options: Record<string, unknown>, rule: RegExp) => {
      await expect(p.enqueue(index, args, options)).rejects.toThrow(ValidationError);
      await expect(p.enqueue(index, args, options)).rejects.toThrow(rule);
    };
    await refused(
      { singleton: { key: 'a' }, throttle: { key: 'a', windowSeconds: 5 } },
      /options\.singleton: give one of singleton, throttle and debounce/,
    );
    await refused({ debounce: { key: 'a', delaySeconds: 5 }, jobId: 'x' }, /options\.debounce: sets the job id and the time itself/);
    await refused({ debounce: { key: 'a', delaySeconds: 5 }, delaySeconds: 3 }, /options\.debounce: sets the job id/);
    await refused(
      { debounce: { key: 'a', delaySeconds: 10, maxWaitSeconds: 5 } },
      /options\.debounce\.maxWaitSeconds: must be >= delaySeconds/,
    );
    await refused({ debounce: { key: 'a', delaySeconds: 366 * 86_400 } }, /options\.debounce\.delaySeconds: must be <= 31536000/);
    await refused({ debounce: { key: 'a', delaySeconds: 0 } }, /options\.debounce\.delaySeconds: must be >= 1/);
    await refused({ throttle: { key: '', windowSeconds: 5 } }, /options\.throttle\.key: must not be empty/);
    await refused({ throttle: { key: 'a\nb', windowSeconds: 5 } }, /options\.throttle\.key: must not contain control characters/);
    await refused({ singleton: { key: 'a', mode: 'cancel' } }, /options\.singleton\.mode/);
    await expect(p.enqueueMany(index, [args], { throttle: { key: 'a', windowSeconds: 5 } } as never)).rejects.toThrow(
      /options\.throttle: applies to enqueue, one job at a time, not to enqueueMany/,
    );
    const memory = new MemoryQueue();
    const fifo = createProducer({ queueUrl: memory.create('jobs.fifo'), jobs: [index], queue: memory, store: new MemoryJobStore() }, {});
    await expect(fifo.enqueue(index, args, { singleton: { key: 'a' } })).rejects.toThrow(
      /options\.singleton: FIFO queues order a group already/,
    );
    const storeless = createProducer({ queueUrl: memory.create('plain'), jobs: [index], queue: memory }, {});
    await expect(storeless.enqueue(index, args, { debounce: { key: 'a', delaySeconds: 2 } })).rejects.toThrow(
      /options\.debounce: needs a job store that keeps keys/,
    );
    expect(memory.peek(memory.create('plain'))).toEqual([]);
  });
});

describe('throttle', () => {
  it('sends the first job of a window and answers the rest with its id; a retry of it passes; the next window sends again', async () => {
    const { memory, url, producer } = setup();
    const p = producer();
    const throttle = { key: 'acme', windowSeconds: 1 };
    const results = [];
    for (let rev = 0; rev < 5; rev++) results.push(await p.enqueue(index, { doc: 'd', rev }, { throttle }));
    expect(results[0]).toMatchObject({ key: 'sent' });
    expect(results[0]!.messageId).toBeDefined();
    for (const r of results.slice(1)) expect(r).toEqual({ jobId: results[0]!.jobId, messageId: undefined, key: 'throttled' });
    expect(memory.peek(url)).toHaveLength(1);
    // Keys are per job type and key: another key has its own window.
    expect((await p.enqueue(index, { doc: 'd', rev: 9 }, { throttle: { key: 'globex', windowSeconds: 1 } })).key).toBe('sent');
    expect((await p.enqueue(index, { doc: 'd', rev: 0 }, { throttle, jobId: results[0]!.jobId })).key).toBe('sent'); // a retry
    await new Promise((r) => setTimeout(r, 1_050));
    const next = await p.enqueue(index, { doc: 'd', rev: 5 }, { throttle });
    expect(next.key).toBe('sent');
    expect(next.jobId).not.toBe(results[0]!.jobId);
  });
});

describe('singleton', () => {
  it('skips while one waits or runs, and sends again once it ended', async () => {
    const { store, producer, worker } = setup();
    const p = producer();
    const first = await p.enqueue(index, { doc: 'slow', rev: 1 }, { singleton: { key: 'doc-1' } });
    expect(first.key).toBe('sent');
    expect(await store.get(first.jobId)).toMatchObject({ state: 'waiting' }); // tracked without asking: its record is the rule's
    expect(await p.enqueue(index, { doc: 'slow', rev: 2 }, { singleton: { key: 'doc-1' } })).toEqual({
      jobId: first.jobId,
      messageId: undefined,
      key: 'skipped',
    });
    await worker();
    await eventually(async () => (await store.get(first.jobId))?.state === 'running', 'it runs');
    // A running one is never stopped, even by `replace`.
    expect((await p.enqueue(index, { doc: 'd', rev: 3 }, { singleton: { key: 'doc-1', mode: 'replace' } })).key).toBe('skipped');
    release!();
    await eventually(async () => (await store.get(first.jobId))?.state === 'completed', 'it completes');
    const again = await p.enqueue(index, { doc: 'd', rev: 4 }, { singleton: { key: 'doc-1' } });
    expect(again.key).toBe('sent');
    await eventually(() => ran.some((r) => r.jobId === again.jobId), 'the next one runs');
    expect(ran.map((r) => r.rev)).toEqual([1, 4]);
  });

  it('replace cancels the waiting one and sends the new one: only the new one runs', async () => {
    const { store, producer, worker } = setup();
    const p = producer();
    const first = await p.enqueue(index, { doc: 'd', rev: 1 }, { singleton: { key: 'doc-2', mode: 'replace' } });
    const second = await p.enqueue(index, { doc: 'd', rev: 2 }, { singleton: { key: 'doc-2', mode: 'replace' } });
    expect(second.key).toBe('replaced');
    expect(await store.get(first.jobId)).toMatchObject({ state: 'cancelled' });
    await worker();
    await eventually(async () => (await store.get(second.jobId))?.state === 'completed', 'the new one ran');
    expect(ran.map((r) => r.rev)).toEqual([2]);
  });

  it('sends one of many enqueues racing from 4 producers', async () => {
    const { memory, url, producer } = setup();
    const producers = Array.from({ length: 4 }, producer);
    const results = await Promise.all(
      producers.flatMap((p, n) =>
        Array.from({ length: 10 }, (_, i) => p.enqueue(index, { doc: 'd', rev: n * 10 + i }, { singleton: { key: 'race' } })),
      ),
    );
    const sent = results.filter((r) => r.key === 'sent');
    expect(sent).toHaveLength(1);
    expect(new Set(results.map((r) => r.jobId))).toEqual(new Set([sent[0]!.jobId]));
    expect(memory.peek(url)).toHaveLength(1);
  });
});

describe('debounce', () => {
  it('runs a burst once, with its last args, after it went quiet; the next enqueue begins a new burst', async () => {
    const { memory, url, store, producer, worker } = setup();
    const p = producer();
    const debounce = { key: 'doc-3', delaySeconds: 1 };
    const results = [];
    for (let rev = 0; rev < 10; rev++) results.push(await p.enqueue(index, { doc: 'd', rev }, { debounce, track: true }));
    const burst = results[0]!.jobId;
    for (const r of results) expect(r).toEqual({ jobId: burst, messageId: undefined, key: 'debounced' });
    expect(burst).toMatch(/^debounce:[\w-]{16}:\d+-[0-9a-f]{6}$/);
    expect(memory.peek(url)).toEqual([]); // kept until it is due
    expect(await store.get(burst)).toMatchObject({ state: 'scheduled' });
    const lastAt = Date.now();
    await worker(true);
    await eventually(() => ran.some((r) => r.jobId === burst), 'the burst ran', 10_000);
    const run = ran.find((r) => r.jobId === burst)!;
    expect(run.rev).toBe(9);
    expect(run.at).toBeGreaterThanOrEqual(lastAt + 1_000 - 5); // after a quiet second, not before
    await new Promise((r) => setTimeout(r, 1_200));
    expect(ran.filter((r) => r.jobId === burst)).toHaveLength(1);
    const next = await p.enqueue(index, { doc: 'd', rev: 10 }, { debounce });
    expect(next.jobId).not.toBe(burst);
    await eventually(() => ran.some((r) => r.jobId === next.jobId && r.rev === 10), 'the next burst ran', 10_000);
  });

  it('a burst whose enqueues come closer than its delay, but not at once, is one burst: its job is not sent a moment early', async () => {
    const { producer, worker } = setup();
    const p = producer();
    await worker(true);
    const debounce = { key: 'doc-gaps', delaySeconds: 2 };
    const ids = new Set<string>();
    for (let rev = 0; rev < 4; rev++) {
      ids.add((await p.enqueue(index, { doc: 'd', rev }, { debounce })).jobId);
      await new Promise((r) => setTimeout(r, 1_500));
    }
    await eventually(() => ran.length > 0, 'the burst ran', 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ids.size).toBe(1);
    expect(ran.map((r) => r.rev)).toEqual([3]);
  });

  it('with maxWaitSeconds, a burst that never goes quiet still runs every maxWait, each time with the args of its moment', async () => {
    const { producer, worker } = setup();
    const p = producer();
    await worker(true);
    const debounce = { key: 'doc-4', delaySeconds: 2, maxWaitSeconds: 2 };
    const started = Date.now();
    let rev = 0;
    const bursts = new Set<string>();
    while (Date.now() - started < 6_500) {
      bursts.add((await p.enqueue(index, { doc: 'd', rev: rev++ }, { debounce })).jobId);
      await new Promise((r) => setTimeout(r, 200));
    }
    await eventually(() => ran.length >= bursts.size, 'every burst ran', 10_000);
    expect(bursts.size).toBeGreaterThanOrEqual(2);
    expect(ran.length).toBe(bursts.size);
    expect(new Set(ran.map((r) => r.jobId))).toEqual(bursts);
    // Each ran once, with a later rev than the one before it.
    const revs = ran.map((r) => r.rev);
    expect([...revs].sort((a, b) => a - b)).toEqual(revs);
  });
});
