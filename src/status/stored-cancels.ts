import type { JobLock } from '../ports/lock.js';
import type { StatusStore } from '../ports/status-store.js';

/**
 * How long a cancel mark lives in memcached: 14 days, the longest SQS keeps a message, so a job
 * cancelled while it waits is still refused when its message is received, however late.
 */
export const CANCEL_MARK_SECONDS = 14 * 86_400;

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
    if (!m.lockUnavailable) {
      if (this.#lock.keptSince === undefined) return false;
      const since = await this.#lock.keptSince(m.jobId);
      if (since !== undefined && m.sentAtMs >= since) return false;
    }
    const ids = m.parentId === undefined ? [m.jobId] : [m.jobId, m.parentId];
    const records = await Promise.all(ids.map((id) => this.#store.get(id).catch(() => undefined)));
    const index = records.findIndex((r) => r?.state === 'cancelled');
    if (index < 0) return false;
    // Over this worker's own claim, if it made one: the job id reads cancelled again.
    await Promise.all(ids.slice(0, index + 1).map((id) => this.#lock.cancel?.(id, CANCEL_MARK_SECONDS)));
    return true;
  }
}
