import type { JobLock } from '../ports/lock.js';
import type { StatusStore } from '../ports/status-store.js';

/**
 * How long a cancel mark lives in memcached: 14 days, the longest SQS keeps a message, so a job
 * cancelled while it waits is still refused when its message is received, however late.
 */
export const CANCEL_MARK_SECONDS = 14 * 86_400;

/** How far SQS's clock (a message's sent time) and a worker's may disagree: a job sent this soon after a restart is looked up too. */
const CLOCK_MARGIN_MS = 5_000;

/*
 * Cancel marks are kept in the job store (the job's record reads `cancelled`), with the lock's
 * memcached as the cache in front of it, where workers look first. memcached forgets every mark
 * when it restarts, so a message sent before the lock's data began (JobLock.keptSince) may carry
 * a job whose mark is gone: for it, and for every message while memcached cannot be reached, the
 * worker asks the store, and puts a mark it finds back into memcached. A message sent since then
 * costs nothing more: its job's mark, if any, was written after memcached started, and is there.
 */

/** What the worker knows of a message whose job id the lock let through (claimed, or could not tell). */
export interface LetThrough {
  readonly jobId: string;
  /** The claim this worker holds on it ('claimed'): let go of when the mark cannot be put back. */
  readonly token: string | undefined;
  /** The fan-out parent: its cancel cancels this job too. */
  readonly parentId: string | undefined;
  /** When the job was first sent (ms since the epoch). */
  readonly sentAtMs: number;
  /** The lock could not be asked: it may hold a mark it could not show. */
  readonly lockUnavailable: boolean;
}

export class StoredCancels {
  readonly #store: Pick<StatusStore, 'get'>;
  readonly #lock: JobLock;

  constructor(store: Pick<StatusStore, 'get'>, lock: JobLock) {
    this.#store = store;
    this.#lock = lock;
  }

  /**
   * Whether the job was cancelled although the lock showed no mark: its record (or its parent's)
   * reads `cancelled`. The mark is written again, so its next claim reads it. A store that cannot
   * be read answers false: the job runs (at least once stays the floor).
   */
  async cancelled(m: LetThrough): Promise<boolean> {
    const ids = m.parentId === undefined ? [m.jobId] : [m.jobId, m.parentId];
    if (!m.lockUnavailable && !(await this.#mayHaveForgotten(ids, m.sentAtMs))) return false;
    const records = await Promise.all(ids.map((id) => this.#store.get(id).catch(() => undefined)));
    const index = records.findIndex((r) => r?.state === 'cancelled');
    if (index < 0) return false;
    // Over this worker's own claim: the job id reads cancelled again (and the parent's, if it was).
    const marked = await Promise.all(ids.slice(0, index + 1).map((id) => this.#lock.cancel?.(id, CANCEL_MARK_SECONDS)));
    if (marked[0] !== true && m.token !== undefined) await this.#lock.release(m.jobId, m.token);
    return true;
  }

  /**
   * Whether a mark of these jobs (the job, its parent: their keys may be on two servers) written
   * after `sentAtMs` may be gone: a server of theirs began keeping its data since, within
   * CLOCK_MARGIN_MS (SQS's clock and the workers' differ), or cannot say.
   */
  async #mayHaveForgotten(ids: readonly string[], sentAtMs: number): Promise<boolean> {
    const keptSince = this.#lock.keptSince?.bind(this.#lock);
    if (keptSince === undefined) return false;
    const since = await Promise.all(ids.map((id) => keptSince(id)));
    return since.some((s) => s === undefined || sentAtMs < s + CLOCK_MARGIN_MS);
  }
}
