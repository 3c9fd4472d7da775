/**
 * Scenario 4: 5% of the items (every 20th) are reported in `failed` on their first attempt and
 * succeed on the next. Counts how many times the handler saw each item, and asserts that no item
 * that succeeded ran again, that every item succeeded, and that nothing was dead-lettered.
 */
import { batchJob, makeItems } from './jobs.js';
import { type Stack, waitFor } from './stack.js';
import { breakdown, fmt } from './stats.js';
import { startWorker } from './worker.js';

export const FAILURES = { keys: 50, maxSize: 500, maxWaitMs: 1_000, concurrency: 10, waitTimeSeconds: 5, failEvery: 20 } as const;

export interface FailuresResult {
  readonly items: number;
  readonly failing: number;
  /** How many items the handler saw once, twice, ... */
  readonly seenTimes: Record<string, number>;
  readonly ranAfterSuccess: number;
  readonly succeeded: number;
  readonly events: { readonly failed: number; readonly succeeded: number; readonly duplicate: number; readonly deadLettered: number };
  readonly dlq: number;
  readonly wallMs: number;
  readonly sqsCallsPerItem: number;
  readonly sqsByAction: Record<string, number>;
  readonly ok: boolean;
}

export async function runFailures(stack: Stack, n: number): Promise<FailuresResult> {
  const fails = (seq: number) => seq % FAILURES.failEvery === 0;
  const seen = new Map<number, number>();
  const succeeded = new Set<number>();
  let ranAfterSuccess = 0;
  const job = batchJob({
    maxSize: FAILURES.maxSize,
    maxWaitMs: FAILURES.maxWaitMs,
    handle: (items) => {
      const failed = [];
      for (const i of items) {
        const seq = i.args.seq;
        seen.set(seq, (seen.get(seq) ?? 0) + 1);
        if (succeeded.has(seq)) ranAfterSuccess++;
        if (fails(seq) && i.attempt === 1) failed.push({ jobId: i.jobId, error: new Error(`item ${seq}: declined on attempt 1`) });
        else succeeded.add(seq);
      }
      return { failed };
    },
  });
  const queue = await stack.freshQueue('fail-once');
  await stack.fill(queue, job, makeItems(n, FAILURES.keys, 7));
  stack.proxy.resetCounts();
  const t0 = performance.now();
  const worker = await startWorker(stack, queue, job, { concurrency: FAILURES.concurrency, waitTimeSeconds: FAILURES.waitTimeSeconds });
  const events = { failed: 0, succeeded: 0, duplicate: 0, deadLettered: 0 };
  worker.on('job:failed', () => events.failed++);
  worker.on('job:succeeded', () => events.succeeded++);
  worker.on('job:duplicate', () => events.duplicate++);
  worker.on('job:dead-lettered', () => events.deadLettered++);
  await waitFor(() => succeeded.size >= n, 'every item to succeed', 120_000);
  const wallMs = performance.now() - t0;
  await stack.drained(queue.directUrl);
  await worker.stop();
  const dlqDepth = await stack.depth(queue.dlqDirectUrl);
  const seenTimes: Record<string, number> = {};
  for (const times of seen.values()) seenTimes[times] = (seenTimes[times] ?? 0) + 1;
  const failing = Array.from({ length: n }, (_, seq) => seq).filter(fails).length;
  const dlq = dlqDepth.visible + dlqDepth.inFlight + dlqDepth.delayed;
  const ok =
    ranAfterSuccess === 0 &&
    succeeded.size === n &&
    dlq === 0 &&
    seenTimes['1'] === n - failing &&
    seenTimes['2'] === failing &&
    Object.keys(seenTimes).length === 2;
  return {
    items: n,
    failing,
    seenTimes,
    ranAfterSuccess,
    succeeded: succeeded.size,
    events,
    dlq,
    wallMs,
    sqsCallsPerItem: stack.proxy.total() / n,
    sqsByAction: stack.proxy.counts(),
    ok,
  };
}

export function failuresLines(r: FailuresResult): string[] {
  const times = Object.entries(r.seenTimes)
    .map(([t, c]) => `${c} items ${t}x`)
    .join(', ');
  return [
    `fail once: ${r.items} items over ${FAILURES.keys} keys, every ${FAILURES.failEvery}th (${r.failing}) reported failed on attempt 1; default backoff (about 1 s)`,
    `  the handler saw: ${times}`,
    `  items that succeeded and ran again: ${r.ranAfterSuccess}   items that succeeded: ${r.succeeded} of ${r.items}   dead-lettered: ${r.dlq}`,
    `  events: job:failed ${r.events.failed}, job:succeeded ${r.events.succeeded}, job:duplicate ${r.events.duplicate}, job:dead-lettered ${r.events.deadLettered}`,
    `  all done in ${fmt(r.wallMs / 1000, 1)} s; SQS calls per item ${fmt(r.sqsCallsPerItem, 3)} (${breakdown(r.sqsByAction)})`,
    `  ${r.ok ? 'PASS' : 'FAIL'}: no succeeded item ran twice, every item succeeded, the ${r.failing} failing items ran exactly twice, the rest once`,
  ];
}
