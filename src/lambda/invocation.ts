import { sleep } from '../core/sleep.js';
import { flushSteps } from '../worker/fate/acts.js';
import type { Lease } from '../worker/hold/lease.js';
import type { SqsBatchResponse, SqsEvent, SqsEventRecord } from './event.js';
import { messageOf, queueUrlOfArn } from './record.js';
import type { WorkerContext } from '../worker/context.js';
import type { Acts } from '../worker/fate/acts.js';
import type { QueueState } from '../worker/queue-state.js';
import type { Walks } from '../worker/walks.js';
import type { RecordsQueue } from './records.js';

/** What an invocation needs of its container (runtime.ts). */
export interface InvocationHost {
  readonly ctx: WorkerContext;
  readonly acts: Acts;
  readonly walks: Walks;
  readonly records: RecordsQueue;
  readonly queues: readonly QueueState[];
  readonly deadlineMarginMs: number;
  /** Set to the invocation's deadline: nothing is held past it. */
  holdUntil: number;
}

/** How long before the function's timeout the answer is given, whatever is still under way (its records reported failed). */
const ANSWER_MARGIN_MS = 250;

/**
 * One invocation: hold each record as a received message, feed them to the walks (each record
 * walks as a worker's message does: read, claim, its turn, run, decide, settle), wait until every
 * one has ended, and answer the records settle did not delete. `deadlineMarginMs` before the
 * function's timeout, handlers' signals fire (DEADLINE) and what has not ended is re-sent, its
 * receive not counted (decide.ts's cutShort). A settle still under way when the answer must go
 * leaves its record failed: it comes back, never lost.
 */
export async function invoke(rt: InvocationHost, event: SqsEvent, remainingMs: number): Promise<SqsBatchResponse> {
  const { ctx, walks, records } = rt;
  const started = Date.now();
  records.begin();
  rt.holdUntil = started + remainingMs - rt.deadlineMarginMs;
  const byQueue = held(rt, event.Records, started);
  // Both timers end with the invocation.
  const over = new AbortController();
  const deadline = sleep(Math.max(0, remainingMs - rt.deadlineMarginMs), over.signal);
  const answerBy = sleep(Math.max(0, remainingMs - ANSWER_MARGIN_MS), over.signal);
  const walk = async () => {
    for (const [url, leases] of byQueue) walks.received(url, leases, leases.length + 1); // asked for more: nothing waits behind them
    if (walks.hasBatchJobs) await Promise.race([walks.batching.flushHeld(), deadline]);
    await Promise.race([ctx.heartbeat.empty(), deadline]);
    if (ctx.heartbeat.size > 0) {
      const reason = `the Lambda invocation's deadline is ${rt.deadlineMarginMs} ms away`;
      for (const handler of walks.activity.running) handler.abort('DEADLINE', reason);
      await walks.fate.handBackUnstarted(walks.scheduler.drain(), reason, true);
      if (walks.hasBatchJobs) await walks.batching.handBackHeld(reason);
    }
    await settled(rt);
  };
  try {
    // Whatever is still under way when the answer must go (a slow SQS or store) leaves its records failed.
    await Promise.race([walk().catch((error: unknown) => ctx.report.onError('invocation', error)), answerBy]);
  } finally {
    over.abort();
  }
  const failed = event.Records.filter((r) => !records.isDone(r));
  return { batchItemFailures: failed.map((r) => ({ itemIdentifier: r.messageId })) };
}

/** The records as held messages, by queue; a record from a queue the handler was not given is logged, and reported failed. */
function held(rt: InvocationHost, given: readonly SqsEventRecord[], now: number): Map<string, Lease[]> {
  const urls = rt.queues.map((q) => q.url);
  const byQueue = new Map<string, Lease[]>();
  const strays = new Set<string>();
  for (const record of given) {
    let url: string;
    try {
      url = queueUrlOfArn(record.eventSourceARN, urls);
    } catch {
      strays.add(String(record.eventSourceARN));
      continue;
    }
    if (!urls.includes(url)) {
      strays.add(record.eventSourceARN);
      continue;
    }
    const leases = byQueue.get(url) ?? [];
    leases.push(rt.ctx.heartbeat.hold(messageOf(record, url), now));
    byQueue.set(url, leases);
  }
  if (strays.size > 0)
    rt.ctx.report.onError(
      'invocation',
      new Error(
        `records from ${[...strays].join(', ')}, a queue this handler was not given (the queues option, SQS_JOBS_QUEUE_URLS or SQS_JOBS_QUEUE_URL): reported failed`,
      ),
    );
  return byQueue;
}

/** Every settle ended and every batched call made: then job status and metrics are written out. */
async function settled(rt: InvocationHost): Promise<void> {
  await rt.ctx.heartbeat.empty();
  await rt.walks.activity.settled();
  for (const [, step] of flushSteps(rt.acts)) await step();
  await rt.ctx.status?.tracker.flush();
  await rt.ctx.metrics?.flush();
}
