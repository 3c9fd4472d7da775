/*
 * The schedule store: schedules kept in the job store, found when due without a scan, and fired by
 * whichever worker claims an occurrence first (no leader). A tick asks each shard for the
 * schedules due by now (an eventually consistent read: one just fired may still show), claims one
 * with a conditional write (only one tick wins, and a claim left by a dead worker lapses), sends its
 * occurrences' jobs, then advances it to its next occurrence under the same claim. A tick that dies
 * between the claim and the advance leaves the schedule due again when the claim lapses; the next
 * tick sends the same job ids, which run once.
 */

/** The due index is split in this many shards (a schedule's is fixed by its id): a shard holds up to DynamoDB's write limit per partition. */
export const SCHEDULE_SHARDS = 4;

/** Where a schedule waits when it is not due: paused, or with no occurrence left. Never reached by a tick's `due <= now`. */
export const NEVER_DUE = 99_999_999_999;

/** A schedule as the store keeps it. */
export interface ScheduleRecord {
  readonly id: string;
  /** Who put it there: `app:<name>` for schedules declared in code (sync), `runtime` for ones made at run time. */
  readonly owner: string;
  /** The definition as JSON text: job, args, cron or every, zone, rules, bounds, queue. */
  readonly spec: string;
  /** 1 when created, +1 with each change of spec: a tick that read an older one does not fire it. */
  readonly revision: number;
  /** The first occurrence not fired yet (epoch seconds); undefined when it has none left. */
  readonly next: number | undefined;
  readonly paused: boolean;
  /** The last occurrence fired. */
  readonly lastFired: number | undefined;
  /** Occurrences not run (catch-up, overlap), counted since it was created. */
  readonly skipped: number;
  /** A tick firing it now (until `untilS`, when the claim lapses). */
  readonly claim: { readonly by: string; readonly untilS: number } | undefined;
}

/** What put answers: written now, the same spec was there already, or the id is another owner's. */
export type PutResult = 'created' | 'updated' | 'unchanged' | 'owned-by-other';

export interface ScheduleStore {
  /**
   * Create a schedule, or replace its spec (a new revision, waiting at `next`). The same spec again
   * changes nothing (its next, counts and pause stay); an id another owner holds is left alone.
   */
  putSchedule(s: {
    readonly id: string;
    readonly owner: string;
    readonly spec: string;
    readonly next: number | undefined;
  }): Promise<PutResult>;
  getSchedule(id: string): Promise<ScheduleRecord | undefined>;
  /** Remove it (only when `owner` holds it, when given): false when there was nothing to remove. */
  removeSchedule(id: string, owner?: string): Promise<boolean>;
  /** Every schedule, in pages of the due index (`cursor`: the last page's, undefined at the start). */
  listSchedules(cursor?: string): Promise<{ readonly schedules: readonly ScheduleRecord[]; readonly cursor: string | undefined }>;
  /**
   * Schedules of `shard` due at `nowS` (next, or a lapsed claim), soonest first, in pages of at most
   * `limit` (`cursor`: the last page's); eventually consistent.
   */
  dueSchedules(
    shard: number,
    nowS: number,
    limit: number,
    cursor?: string,
  ): Promise<{ readonly schedules: readonly ScheduleRecord[]; readonly cursor: string | undefined }>;
  /**
   * Claim the schedule to fire what is due: only while it is still at `next` and `revision`, and no
   * claim holds it (or its claim lapsed by `nowS`). False: another tick has it, or it changed.
   */
  claimSchedule(
    id: string,
    seen: { readonly next: number; readonly revision: number },
    claim: { readonly by: string; readonly untilS: number; readonly nowS: number },
  ): Promise<boolean>;
  /**
   * Under the claim `by` (a token for this one claim) of the occurrence `from` at `revision`: move to
   * `next` (undefined: none left), record the last fired and the skipped, end the claim.
   */
  advanceSchedule(
    id: string,
    claim: { readonly by: string; readonly from: number; readonly revision: number },
    to: { readonly next: number | undefined; readonly lastFired: number | undefined; readonly skipped: number },
  ): Promise<boolean>;
  /** Pause it: never due until resumed; a tick firing it now still advances it. False when there is no such schedule. */
  pause(id: string): Promise<boolean>;
  /** Resume it at `next` (the caller computes it from the spec of `revision`): false when it is gone or its spec changed. */
  resume(id: string, seen: { readonly revision: number }, next: number | undefined): Promise<boolean>;
}

/** The due index's shard of a schedule: fixed by its id. */
export function shardOf(id: string): number {
  let h = 0;
  for (let i = 0; i < id.length; i++) h = (h * 31 + id.charCodeAt(i)) | 0;
  return Math.abs(h) % SCHEDULE_SHARDS;
}
