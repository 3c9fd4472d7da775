import { SqsJobsError } from '../core/errors.js';
import { type AnyDefinition, type FanOutOptions, validateArgs } from '../core/job.js';
import { derivedJobId } from '../core/envelope.js';
import { checkCompletion, sendCompletion } from './completion.js';
import type { CountDeps } from './count.js';
import type { CompletionSpec } from '../ports/fan-out-store.js';

/** What ctx.fanOut and a child's count work with: the fan-out store, producers and the worker's jobs. */
export type FanOutDeps = CountDeps;

interface FanOutParent {
  readonly jobId: string;
  readonly jobName: string;
  readonly queueUrl: string;
  /** The parent's message (its first, across re-sends): the same message retried re-claims an empty fan-out's completion. */
  readonly originId: string;
  readonly signal: AbortSignal;
}

/**
 * Split a job into one child per entry of `argsList`. Every entry is validated first; then the
 * parent's fan-out is opened with its total (before any child can end) and the children are sent
 * with the batched producer, chunk by chunk, the cursor saved after each. Child ids are derived
 * from the parent's (`<parent>.c<index>`), so a parent retried after a crash resumes at the cursor
 * and a chunk sent twice is the same jobs again (the dedupe lock runs them once, the counters
 * count them once).
 */
export async function fanOut(
  deps: FanOutDeps,
  parent: FanOutParent,
  child: AnyDefinition,
  argsList: readonly unknown[],
  options: FanOutOptions = {},
): Promise<{ parentId: string; total: number }> {
  if (!Array.isArray(argsList)) throw new SqsJobsError('ARGS_INVALID', 'ctx.fanOut: argsList must be an array');
  argsList.forEach((args, i) => {
    try {
      validateArgs(child, args);
    } catch (error) {
      throw new SqsJobsError('ARGS_INVALID', `ctx.fanOut: argsList[${i}]: ${(error as Error).message}`, { cause: error });
    }
  });
  const queueUrl = options.queueUrl ?? parent.queueUrl;
  const done = options.onComplete;
  const total = argsList.length;
  // The completion job gets { ...args, parentId, total, succeeded, failed }: check now that it can
  // be sent (its schema, where known, takes that; its message fits), rather than after every child has run.
  let completion: CompletionSpec | undefined;
  if (done !== undefined) {
    const name = typeof done.job === 'string' ? done.job : done.job.name;
    const trace = deps.tracing?.active();
    completion = {
      job: name,
      queueUrl: done.queueUrl ?? parent.queueUrl,
      ...(done.args === undefined ? {} : { args: done.args }),
      ...(trace === undefined ? {} : { trace }),
    };
    try {
      checkCompletion(deps, parent.jobId, completion, typeof done.job === 'string' ? undefined : done.job, total);
    } catch (error) {
      const code = error instanceof SqsJobsError ? error.code : 'ARGS_INVALID';
      throw new SqsJobsError(code, `ctx.fanOut: onComplete: ${(error as Error).message}`, { cause: error });
    }
  }
  const opened = await deps.store.openFanOut(parent.jobId, parent.jobName, total, completion);
  if (total === 0) {
    const spec = await deps.store.claimEmptyCompletion(parent.jobId, parent.originId, deps.reclaimAfterMs);
    if (spec !== undefined) await sendCompletion(deps, parent.jobId, spec, { total: 0, succeeded: 0, failed: 0 });
    return { parentId: parent.jobId, total };
  }
  const producer = deps.producer(queueUrl);
  const chunkSize = options.chunkSize ?? 1_000;
  for (let start = opened.sent; start < total; start += chunkSize) {
    if (parent.signal.aborted) throw parent.signal.reason;
    const end = Math.min(total, start + chunkSize);
    const jobIds = Array.from({ length: end - start }, (_, k) => derivedJobId(parent.jobId, `c${start + k}`));
    await producer.enqueueMany(child, argsList.slice(start, end) as never[], {
      jobIds,
      parent: parent.jobId,
      ...(options.track ? { track: true } : {}),
    });
    await deps.store.fanOutSent(parent.jobId, end);
  }
  return { parentId: parent.jobId, total };
}
