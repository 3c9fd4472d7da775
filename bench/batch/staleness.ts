/**
 * Scenario 3: a trickle, 1 item a second on each of 5 keys (5 items/s in all), for `seconds`.
 * Batches never fill (maxSize 500), so each is flushed by maxWaitMs (2,000 ms). Measured per
 * handler call: the age of its oldest item, from the item's enqueuedAt (set by the producer just
 * before SendMessage, on this machine's clock) to the handler call. The bound it is compared with
 * is maxWaitMs + one long-poll wait (waitTimeSeconds 1 here).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { batchJob, type ItemArgs, keyName } from './jobs.js';
import { type Stack, waitFor } from './stack.js';
import { fmt, mean, percentile } from './stats.js';
import { startWorker } from './worker.js';

export const STALENESS = { keys: 5, perKeyPerSecond: 1, maxSize: 500, maxWaitMs: 2_000, waitTimeSeconds: 1, concurrency: 10 } as const;

export interface StalenessResult {
  readonly seconds: number;
  readonly items: number;
  readonly flushes: number;
  readonly itemsPerFlush: number;
  readonly oldestAgeMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly boundMs: number;
  readonly overBound: number;
  readonly sqsCallsPerItem: number;
  readonly sqsByAction: Record<string, number>;
}

export async function runStaleness(stack: Stack, seconds: number): Promise<StalenessResult> {
  const ages: number[] = [];
  const sizes: number[] = [];
  let handled = 0;
  const job = batchJob({
    maxSize: STALENESS.maxSize,
    maxWaitMs: STALENESS.maxWaitMs,
    handle: (items) => {
      const now = Date.now();
      ages.push(now - Math.min(...items.map((i) => i.enqueuedAt.getTime())));
      sizes.push(items.length);
      handled += items.length;
    },
  });
  const queue = await stack.freshQueue('trickle');
  stack.proxy.resetCounts();
  const worker = await startWorker(stack, queue, job, { concurrency: STALENESS.concurrency, waitTimeSeconds: STALENESS.waitTimeSeconds });
  const producer = stack.producerFor(queue);
  const rate = STALENESS.keys * STALENESS.perKeyPerSecond;
  const total = seconds * rate;
  const t0 = Date.now();
  // Paced by the clock, not by the sends: item i goes out at t0 + i / rate seconds, keys in turn.
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate;
    if (at > Date.now()) await sleep(at - Date.now());
    const args: ItemArgs = { seq: i, key: keyName(i % STALENESS.keys) };
    await producer.enqueue(job, args);
  }
  producer.close();
  await waitFor(() => handled >= total, 'the trickle to be handled', STALENESS.maxWaitMs + 30_000);
  await stack.drained(queue.directUrl);
  await worker.stop();
  const boundMs = STALENESS.maxWaitMs + STALENESS.waitTimeSeconds * 1000;
  return {
    seconds,
    items: total,
    flushes: sizes.length,
    itemsPerFlush: mean(sizes),
    oldestAgeMs: { p50: percentile(ages, 50), p99: percentile(ages, 99), max: Math.max(...ages) },
    boundMs,
    overBound: ages.filter((a) => a > boundMs).length,
    sqsCallsPerItem: stack.proxy.total() / total,
    sqsByAction: stack.proxy.counts(),
  };
}

export function stalenessLines(r: StalenessResult): string[] {
  const a = r.oldestAgeMs;
  return [
    `trickle: ${STALENESS.perKeyPerSecond} item/s on each of ${STALENESS.keys} keys for ${r.seconds} s (${r.items} items), maxSize ${STALENESS.maxSize}, maxWaitMs ${STALENESS.maxWaitMs}, waitTimeSeconds ${STALENESS.waitTimeSeconds}`,
    `  ${r.flushes} flushes, ${fmt(r.itemsPerFlush, 1)} items each`,
    `  age of the oldest item at flush (enqueuedAt -> handler call): p50 ${fmt(a.p50, 0)} ms, p99 ${fmt(a.p99, 0)} ms, max ${fmt(a.max, 0)} ms`,
    `  bound maxWaitMs + one poll wait = ${r.boundMs} ms: ${r.overBound === 0 ? 'every flush within it' : `${r.overBound} of ${r.flushes} flushes above it`}; max / bound = ${fmt(a.max / r.boundMs)}`,
    `  SQS calls per item ${fmt(r.sqsCallsPerItem, 3)} (idle long polls of 1 s dominate at this rate)`,
  ];
}
