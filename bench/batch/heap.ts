/**
 * Scenario 6: heap per held batch item. Items over 50 keys are received and held in batches that
 * neither fill (maxSize 10,000) nor turn stale (maxWaitMs 10 minutes), at four levels; at each, the
 * least of five heap readings after a GC, and the least-squares slope through them (fixed costs
 * drop out). Needs node --expose-gc (run.sh gives it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type HeapPoint, leastHeapAfterGc, leastSquaresSlope } from '../lib/heap-slope.js';
import { batchJob, makeItems } from './jobs.js';
import { type Stack, waitFor } from './stack.js';
import { fmt } from './stats.js';
import { startWorker } from './worker.js';

export interface HeapResult {
  readonly held: number;
  readonly bytesPerItem: number;
  readonly bodyBytes: number;
}

export async function runHeap(stack: Stack, held: number): Promise<HeapResult> {
  const queue = await stack.freshQueue('heap', 900);
  const job = batchJob({ maxSize: 10_000, maxWaitMs: 600_000, handle: () => undefined });
  const worker = await startWorker(stack, queue, job, {
    concurrency: 10,
    waitTimeSeconds: 1,
    visibilityTimeoutSeconds: 900,
    maxHeldBatchItems: 2 * held, // below the budget: no batch is flushed for room
  });
  const items = makeItems(held, 50);
  const points: HeapPoint[] = [];
  try {
    for (let level = 1; level <= 4; level++) {
      const target = (held / 4) * level;
      await stack.fill(queue, job, items.slice((held / 4) * (level - 1), target));
      await waitFor(() => worker.inFlight.batched >= target, `${target} batch items held`, 60_000);
      await sleep(300); // the claims' and the receive's own garbage
      points.push({ held: worker.inFlight.batched, heapUsed: leastHeapAfterGc() });
    }
  } finally {
    await worker.stop();
  }
  const body = JSON.stringify({
    v: 1,
    id: '00000000-0000-0000-0000-000000000000',
    job: job.name,
    args: items[0],
    enqueuedAt: new Date().toISOString(),
  });
  return { held, bytesPerItem: leastSquaresSlope(points), bodyBytes: Buffer.byteLength(body) };
}

export function heapLines(r: HeapResult): string[] {
  return [
    `heap per held batch item (slope over four levels up to ${r.held} held, after GC; body about ${r.bodyBytes} B): ${fmt(r.bytesPerItem, 0)} B`,
  ];
}
