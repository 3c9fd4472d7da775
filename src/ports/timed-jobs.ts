import type { OutgoingMessage } from '../core/message.js';

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
}

/** A kept job as the store has it: with the claim of a tick sending it now. */
export interface TimedRecord extends TimedJob {
  readonly claim: { readonly by: string; readonly untilS: number } | undefined;
}

export interface TimedJobStore {
  /** Keep it: false when a job with this id is kept already (it stays as it was). */
  putTimed(job: TimedJob): Promise<boolean>;
  getTimed(jobId: string): Promise<TimedRecord | undefined>;
  /** Kept jobs of `shard` due by `untilS` (epoch seconds; or whose claim lapsed by then), soonest first, in pages (`cursor`: the last page's); eventually consistent. */
  dueTimed(
    shard: number,
    untilS: number,
    limit: number,
    cursor?: string,
  ): Promise<{ readonly jobs: readonly TimedRecord[]; readonly cursor: string | undefined }>;
  /** Claim it to send it: only while no claim holds it (or its claim lapsed by `nowS`). False: another tick has it, or it is gone. */
  claimTimed(jobId: string, claim: { readonly by: string; readonly untilS: number; readonly nowS: number }): Promise<boolean>;
  /**
   * Remove it: under the claim `by` (its tick, once sent), or, without `by`, only while no live
   * claim holds it at `nowS` (a cancel: a job being sent is not taken from under its send). False: it was not removed.
   */
  removeTimed(jobId: string, by: { readonly claim: string } | { readonly nowS: number }): Promise<boolean>;
}
