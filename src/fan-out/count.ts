import type { Logger } from 'pino';
import { sleep } from '../core/sleep.js';
import { type CompletionDeps, sendCompletion } from './completion.js';

export interface CountDeps extends CompletionDeps {
  /** How long a claimed completion may stay unsent before another caller takes it over. */
  readonly reclaimAfterMs: number;
  readonly logger: Logger;
  readonly onError: (where: string, error: unknown) => void;
}

/** A fan-out child's end, as its worker saw it. */
interface ChildOutcome {
  readonly jobId: string;
  readonly parentId: string;
  readonly succeeded: boolean;
  /**
   * The message the child's dedupe lock names (its first, across re-sends): it claims the
   * completion with it, so the same message coming back after a failed send claims again, and a
   * copy of the child (another message) waits instead of sending a second completion.
   */
  readonly originId: string;
}

/**
 * Count a fan-out child's end in its parent, and send the completion job when this end completed
 * the set. False when the child's message must come back, not be deleted: the count, or the
 * completion it claimed, did not go through (it is counted then, once per child id), or another
 * child's recent claim holds the unsent completion (taken over if that claimer died).
 */
export async function countChild(deps: CountDeps, child: ChildOutcome): Promise<boolean> {
  const { store, reclaimAfterMs, logger } = deps;
  const { jobId, parentId } = child;
  try {
    const end = { parentId, childId: jobId, succeeded: child.succeeded };
    let count = await store.childEnded(end, child.originId, reclaimAfterMs);
    // Children ending together: one claims the completion, the others usually see it sent within
    // moments. Ask again a few times before handing the message back for later.
    for (let wait = 100; count.kind === 'completion-pending' && wait <= 800; wait *= 2) {
      await sleep(wait);
      count = await store.childEnded(end, child.originId, reclaimAfterMs);
    }
    if (count.kind === 'no-fan-out') {
      logger.warn({ jobId, parentId }, 'this child names a fan-out the job store has no record of (expired?): not counted');
      return true;
    }
    if (count.kind === 'completion-pending') return false;
    if (count.completion !== undefined) {
      await sendCompletion(deps, parentId, count.completion, count.status);
      logger.info({ parentId, ...count.status, completionJob: count.completion.job }, 'fan-out complete: completion job sent');
    }
    return true;
  } catch (error) {
    deps.onError('fan-out count', error);
    logger.warn(
      { err: error, jobId, parentId },
      'could not count this child in its fan-out (or send its completion): its message comes back and is counted then',
    );
    return false;
  }
}
