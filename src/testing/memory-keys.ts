import type { BurstUpdate, EnqueueKeys, KeyRecord } from '../ports/enqueue-keys.js';
import type { TimedJob } from '../ports/timed-jobs.js';
import type { MemoryTimedJobs } from './memory-timed.js';

/**
 * Keys on enqueue in memory, with the rules DynamoDB's conditional writes keep
 * (test/contracts/enqueue-keys-port.test.ts runs both): a key is taken only when free, a burst is
 * opened together with its kept job, and extended only while no tick ever claimed it.
 */
export class MemoryEnqueueKeys implements EnqueueKeys {
  readonly #keys = new Map<string, KeyRecord>();
  readonly #timed: MemoryTimedJobs;

  constructor(timed: MemoryTimedJobs) {
    this.#timed = timed;
  }

  async readKey(id: string): Promise<KeyRecord | undefined> {
    const r = this.#keys.get(id);
    return r === undefined ? undefined : { ...r };
  }

  async takeKey(id: string, record: KeyRecord, free: { holder?: string; nowMs: number }): Promise<KeyRecord | undefined> {
    const r = this.#keys.get(id);
    const isFree =
      r === undefined || r.jobId === record.jobId || r.jobId === free.holder || (r.untilMs !== undefined && r.untilMs <= free.nowMs);
    if (!isFree) return { ...r };
    this.#keys.set(id, { ...record });
    return undefined;
  }

  async releaseKey(id: string, jobId: string): Promise<void> {
    if (this.#keys.get(id)?.jobId === jobId) this.#keys.delete(id);
  }

  async openBurst(id: string, record: KeyRecord, job: TimedJob, holder: string | undefined): Promise<boolean> {
    // All at once, with no await between the checks and the writes: one transaction, as DynamoDB's.
    const r = this.#keys.get(id);
    if ((r !== undefined && r.jobId !== holder) || this.#timed.has(job.jobId)) return false;
    this.#timed.keep({ ...job, debounced: true });
    this.#keys.set(id, { ...record });
    return true;
  }

  async extendBurst(jobId: string, burst: BurstUpdate): Promise<'extended' | 'closed' | 'later'> {
    return this.#timed.extendBurst(jobId, burst);
  }
}
