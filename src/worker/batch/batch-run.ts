import type { Logger } from 'pino';
import type { BatchItem } from '../../core/batch-job.js';
import { SqsJobsError, toError } from '../../core/errors.js';
import type { JobInfo } from '../../core/job-events.js';
import type { RunNeeds, TurnNeeds } from '../context.js';
import type { Batch } from './batches.js';
import { afterRun, cutShort, type Execution, handedBackNow, type Outcome } from '../decide/decide.js';
import { heldFactsOf } from '../hold/held-facts.js';
import { endedWhileHeld, type HeldItem } from './held-item.js';
import { execute } from '../run/execute.js';
import { type AbortCode, type AbortWatcher, abortedWith, type Interruptible } from '../hold/lease.js';
import { firstSentAt } from '../../core/delivery.js';
import { carriedBy } from '../reading.js';
import { batchTurn, type Later } from '../turns/batch-turn.js';
import { newToken } from '../run/claim.js';
import { batchSpanFor, endBatchSpan } from '../run/span-end.js';

interface ItemOutcome {
  readonly item: HeldItem;
  readonly info: JobInfo;
  readonly outcome: Outcome;
}

/** One call of a batch handler: what it runs under. Shutdown and the timeout abort it; an item's lost lease does not. */
export class BatchRun implements Interruptible {
  readonly token = newToken();
  readonly #controller = new AbortController();

  constructor(readonly batch: Batch<HeldItem>) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get abortReason(): SqsJobsError | undefined {
    return this.signal.aborted ? (this.signal.reason as SqsJobsError) : undefined;
  }

  whenAborted(watcher: AbortWatcher | undefined): void {
    this.#whenAborted = watcher;
  }

  #whenAborted: AbortWatcher | undefined;

  abort(code: AbortCode, message: string): void {
    if (this.signal.aborted) return;
    this.#controller.abort(new SqsJobsError(code, message));
    const watcher = this.#whenAborted;
    this.#whenAborted = undefined;
    watcher?.onAbort();
  }
}

/** What became of a batch: items that ended (ran, or ended without running), and items that go back to fill, tried again from `retryAt`. */
interface FlushResult {
  readonly ended: ItemOutcome[];
  readonly back?: Later<HeldItem>;
}

/**
 * Flush one batch: ask its turn (turns/batch-turn.ts: its key's lock, its capped tenants' permits,
 * its rate slot), drop items whose lease was lost while they waited, call the handler once under
 * the run's signal, and decide each item's outcome on its own: an item the handler reported failed
 * retries (or is dead-lettered) alone; when the handler throws or times out, every item failed; at
 * the shutdown deadline every item is handed back. Back to fill: what its turn says. Never throws.
 */
export async function runBatch(ctx: RunNeeds & TurnNeeds, run: BatchRun): Promise<FlushResult> {
  const all = run.batch.items;
  const turn = await batchTurn(ctx, run.batch, run.token, run.signal);
  if ('back' in turn) return { ended: [], back: turn.back };
  let abandoned = false;
  try {
    // Stopped (or at a Lambda invocation's deadline) while it waited for its turn: handed back, never started.
    if (run.signal.aborted) {
      const deadline = abortedWith(run.signal, 'DEADLINE') ? run.abortReason!.message : undefined;
      const back = (item: HeldItem) =>
        deadline === undefined
          ? handedBackNow('worker is stopping')
          : cutShort(deadline, heldFactsOf(ctx, item.lease), { ran: false, abandoned: false });
      return { ended: all.map((item) => ({ item, info: item.read.info, outcome: back(item) })) };
    }
    const ended = await flush(ctx, run, turn.run);
    abandoned = ended.some((o) => 'abandoned' in o.outcome && o.outcome.abandoned);
    return turn.capped === undefined ? { ended } : { ended, back: turn.capped };
  } finally {
    await turn.release(abandoned);
  }
}

async function flush(ctx: RunNeeds, run: BatchRun, held: readonly HeldItem[]): Promise<ItemOutcome[]> {
  const { job, key } = run.batch;
  const results: ItemOutcome[] = [];
  const items: HeldItem[] = [];
  for (const item of held) {
    const ended = endedWhileHeld(item);
    if (ended !== undefined) results.push({ item, info: item.read.info, outcome: ended });
    else items.push(item);
  }
  if (items.length === 0) return results;
  const now = Date.now();
  const info = { jobName: job.name, key, queueUrl: items[0]!.queueUrl, size: items.length };
  ctx.report.emit('batch:start', { ...info, heldMs: now - Math.min(...items.map((i) => i.heldAt)) });
  const waits = items.map((item) => {
    const waitMs = Math.max(0, now - firstSentAt(item.lease.message));
    ctx.report.emit('job:start', { ...item.read.info, waitMs });
    if (item.lease.tracking !== undefined) ctx.status?.tracker.running(item.read.info, item.lease.tracking);
    return waitMs;
  });
  const log = ctx.report.log.child({ job: job.name, key, size: items.length });
  const span =
    ctx.tracing === undefined
      ? undefined
      : batchSpanFor(
          ctx,
          job.name,
          info.queueUrl,
          key,
          items.map((i) => ({ info: i.read.info, trace: carriedBy(i.read, i.lease.message) })),
        );
  const call = () =>
    job.handle(
      items.map((i) => toBatchItem(i)),
      { jobName: job.name, key, signal: run.signal, log },
    );
  const execution = await execute(span === undefined ? call : () => span.within(call), run, {
    timeoutMs: job.timeoutMs,
    jobName: job.name,
    batch: true,
    graceMs: ctx.config.abortGraceMs,
  });
  if (execution.kind === 'aborted' && execution.abandoned) {
    log.warn(
      { graceMs: ctx.config.abortGraceMs },
      'the batch handler did not settle after its signal fired: abandoned, its items keep their locks until the TTL ends',
    );
  }
  const failures = execution.kind === 'returned' ? reportedFailures(execution.value, items, log) : new Map<string, Error>();
  let failed = 0;
  items.forEach((item, i) => {
    const m = item.lease.message;
    const outcome = afterRun({
      execution: itemExecution(execution, failures.get(item.read.envelope.id)),
      receiveCount: m.receiveCount,
      attempt: item.read.info.attempt,
      maxReceiveCount: ctx.queueOf(m.queueUrl).maxReceiveCount,
      backoff: job.backoff,
      waitMs: waits[i]!,
      ...(abortedWith(run.signal, 'DEADLINE') ? { held: heldFactsOf(ctx, item.lease) } : {}),
    });
    if (outcome.kind !== 'succeeded') failed++;
    results.push({ item, info: item.read.info, outcome });
  });
  if (span !== undefined) endBatchSpan(ctx, span, execution.kind !== 'returned', results.slice(results.length - items.length));
  ctx.report.emit('batch:end', { ...info, failed, processMs: execution.processMs });
  return results;
}

/**
 * How one item of a batch ran: as the batch did, except that an item the handler reported failed
 * (`failure`) failed on its own while its neighbours succeeded.
 */
export function itemExecution(batch: Execution, failure: Error | undefined): Execution {
  if (batch.kind !== 'returned') return batch;
  if (failure !== undefined) return { kind: 'threw', error: failure, processMs: batch.processMs };
  return { kind: 'returned', value: undefined, processMs: batch.processMs }; // the batch's answer is not the item's result
}

function toBatchItem(item: HeldItem): BatchItem<unknown> {
  const e = item.read.envelope;
  return {
    jobId: e.id,
    args: item.read.args,
    attempt: item.read.info.attempt,
    messageId: item.lease.message.messageId,
    tenant: e.tenant,
    enqueuedAt: new Date(e.enqueuedAt),
  };
}

/** The failed items a handler reported, by job id. A malformed answer or an unknown id is logged and ignored. */
export function reportedFailures(value: unknown, items: readonly HeldItem[], log: Logger): Map<string, Error> {
  const failures = new Map<string, Error>();
  if (value === undefined || value === null) return failures;
  const failed = (value as { failed?: unknown }).failed;
  if (failed === undefined) return failures;
  if (!Array.isArray(failed)) {
    log.warn('the batch handler returned { failed } that is not an array: every item is taken as succeeded');
    return failures;
  }
  const ids = new Set(items.map((i) => i.read.envelope.id));
  for (const entry of failed as unknown[]) {
    const jobId = (entry as { jobId?: unknown } | null)?.jobId;
    if (typeof jobId !== 'string' || !ids.has(jobId)) {
      log.warn({ jobId }, 'the batch handler reported a failure for a job id not in this batch: ignored');
      continue;
    }
    failures.set(jobId, toError((entry as { error?: unknown }).error ?? new Error('reported failed by the batch handler')));
  }
  return failures;
}
