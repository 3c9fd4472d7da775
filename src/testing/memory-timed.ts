import type { BurstUpdate } from '../ports/enqueue-keys.js';
import { type TimedJob, type TimedJobStore, type TimedRecord, timedShardOf } from '../ports/timed-jobs.js';

type Stored = { -readonly [K in keyof TimedRecord]: TimedRecord[K] } & { due: number };

/**
 * Jobs kept until their time, in memory, with the rules DynamoDB's conditions keep
 * (test/contracts/timed-jobs-port.test.ts runs both): one claim at a time, lapsing at its time; a
 * removal under its claim, or by a cancel only while no live claim holds it. Its due reads are current.
 */
export class MemoryTimedJobs implements TimedJobStore {
  readonly #items = new Map<string, Stored>();

  async putTimed(job: TimedJob): Promise<boolean> {
    return this.keep(job);
  }

  /** putTimed, at once (no await): what a transaction that also writes elsewhere needs (MemoryEnqueueKeys.openBurst). */
  keep(job: TimedJob): boolean {
    if (this.#items.has(job.jobId)) return false;
    this.#items.set(job.jobId, { ...job, claim: undefined, due: Math.floor(job.dueMs / 1000) });
    return true;
  }

  /** Whether a job with this id is kept, at once. */
  has(jobId: string): boolean {
    return this.#items.has(jobId);
  }

  async getTimed(jobId: string): Promise<TimedRecord | undefined> {
    const s = this.#items.get(jobId);
    if (s === undefined) return undefined;
    const { due: _, ...record } = s;
    return { ...record };
  }

  async dueTimed(shard: number, untilS: number, limit: number, cursor?: string) {
    const after = cursor === undefined ? undefined : (JSON.parse(cursor) as [number, string]);
    const due = [...this.#items.values()]
      .filter((s) => timedShardOf(s) === shard && s.due <= untilS)
      .sort((a, b) => a.due - b.due || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0))
      .filter((s) => after === undefined || s.due > after[0] || (s.due === after[0] && s.jobId > after[1]));
    const page = due.slice(0, limit);
    const last = page.at(-1);
    return {
      jobs: await Promise.all(page.map(async (s) => (await this.getTimed(s.jobId))!)),
      cursor: due.length > limit && last !== undefined ? JSON.stringify([last.due, last.jobId]) : undefined,
    };
  }

  async claimTimed(jobId: string, claim: { by: string; untilS: number; nowS: number; dueByMs: number }) {
    const s = this.#items.get(jobId);
    if (s === undefined || (s.claim !== undefined && s.claim.untilS > claim.nowS) || s.dueMs > claim.dueByMs) return undefined;
    s.claim = { by: claim.by, untilS: claim.untilS };
    s.due = claim.untilS;
    return this.getTimed(jobId);
  }

  /** A burst's latest message, queue and due time, while no tick ever claimed it and its time is not later (EnqueueKeys.extendBurst). */
  extendBurst(jobId: string, burst: BurstUpdate): 'extended' | 'closed' | 'later' {
    const s = this.#items.get(jobId);
    if (s === undefined || s.claim !== undefined) return 'closed'; // a claim is never taken back, only removed with the job
    if (s.dueMs > burst.dueMs) return 'later';
    s.message = burst.message;
    s.queueUrl = burst.queueUrl;
    s.dueMs = burst.dueMs;
    s.due = Math.floor(burst.dueMs / 1000);
    return 'extended';
  }

  async removeTimed(jobId: string, by: { claim: string } | { nowS: number }): Promise<boolean> {
    const s = this.#items.get(jobId);
    if (s === undefined) return false;
    const free = 'claim' in by ? s.claim?.by === by.claim : s.claim === undefined || s.claim.untilS <= by.nowS;
    return free && this.#items.delete(jobId);
  }
}
