import type { OutgoingMessage } from '../core/message.js';
import { SCHEDULE_SHARDS, shardOf } from './schedule-store.js';

/*
 * Jobs that run at a time beyond SQS's own delay (900 s): kept in the job store until shortly
 * before their time, as the message the producer made, then sent by a worker's tick with the delay
 * left, so they start on time. They share the schedules' due index (partitions `t0`..`t3`), and
 * are claimed, sent and removed as a schedule's occurrence is: a tick that dies after its send sends
 * the same message again once its claim lapses, and the job id runs once.
 */

/** A job kept until its time. */
export interface TimedJob {
  readonly jobId: string;
  readonly jobName: string;
  readonly queueUrl: string;
  /** The message to send, as the producer made it (no delay: the tick gives it the delay left). */
  readonly message: Pick<OutgoingMessage, 'body' | 'attributes' | 'groupId'>;
  /** When it is to run, in epoch milliseconds. */
  readonly dueMs: number;
  /** Enqueued with `track`: its record reads `scheduled`, then `waiting` from its time on. */
  readonly tracked: boolean;
  readonly enqueuedAt: string;
  /**
   * A debounced burst's job (ports/enqueue-keys.ts): its due time moves with each enqueue of the
   * burst, so it is kept in a family of shards of its own, read each second and sent only once due
   * (a kept job is sent up to HORIZON_S early, with SQS's delay for the rest).
   */
  readonly debounced?: boolean;
}

/** Shards of the due index per family (kept jobs `0..3`, debounced bursts `4..7`). */
export const TIMED_SHARDS = SCHEDULE_SHARDS;

/** The due index shard a kept job waits in: its family's, by its job id. */
export function timedShardOf(job: Pick<TimedJob, 'jobId' | 'debounced'>): number {
  return shardOf(job.jobId) + (job.debounced === true ? TIMED_SHARDS : 0);
}

/** A kept job as the store has it: with the claim of a tick sending it now. */
export interface TimedRecord extends TimedJob {
  readonly claim: { readonly by: string; readonly untilS: number } | undefined;
}

export interface TimedJobStore {
  /** Keep it: false when a job with this id is kept already (it stays as it was). */
  putTimed(job: TimedJob): Promise<boolean>;
  getTimed(jobId: string): Promise<TimedRecord | undefined>;
  /** Kept jobs of `shard` (timedShardOf) due by `untilS` (epoch seconds; or whose claim lapsed by then), soonest first, in pages (`cursor`: the last page's); eventually consistent. */
  dueTimed(
    shard: number,
    untilS: number,
    limit: number,
    cursor?: string,
  ): Promise<{ readonly jobs: readonly TimedRecord[]; readonly cursor: string | undefined }>;
  /**
   * Claim it to send it: only while no claim holds it (or its claim lapsed by `nowS`) and it is due
   * by `dueByMs` (to the millisecond: the index is by the second; a burst moved later since the index was read is not). Answers it as claimed (its
   * message is final from then on), or undefined: another tick has it, it is not due, or it is gone.
   */
  claimTimed(
    jobId: string,
    claim: { readonly by: string; readonly untilS: number; readonly nowS: number; readonly dueByMs: number },
  ): Promise<TimedRecord | undefined>;
  /**
   * Remove it: under the claim `by` (its tick, once sent), or, without `by`, only while no live
   * claim holds it at `nowS` (a cancel: a job being sent is not taken from under its send). False: it was not removed.
   */
  removeTimed(jobId: string, by: { readonly claim: string } | { readonly nowS: number }): Promise<boolean>;
}
