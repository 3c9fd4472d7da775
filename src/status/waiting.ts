import type { StatusStore } from '../ports/status-store.js';

/** A sent message, as far as its `waiting` record goes. */
interface SentJob {
  readonly jobId: string;
  /** Set when it was enqueued with `track: true`. */
  readonly track: { readonly enqueuedAt: string; readonly parentId: string | undefined; readonly tenant?: string | undefined } | undefined;
}

/**
 * Record the sent jobs that asked for it as `waiting`, up to WRITES_AT_ONCE writes at a time, for
 * any store (the DynamoDB store sends them together, 25 to a call, four calls out: 100 keeps its
 * calls full). Best effort: the job is
 * enqueued whatever happens here, and the worker's writes create the record if this one is lost.
 */
export async function recordWaiting(store: StatusStore | undefined, jobName: string, sent: readonly SentJob[]): Promise<void> {
  const tracked = sent.filter((m) => m.track !== undefined);
  if (store === undefined || tracked.length === 0) return;
  let next = 0;
  const write = async () => {
    while (next < tracked.length) {
      const m = tracked[next++]!;
      await store
        .transition({
          jobId: m.jobId,
          jobName,
          state: 'waiting',
          attempt: 0,
          at: new Date(),
          enqueuedAt: m.track!.enqueuedAt,
          parentId: m.track!.parentId,
          tenant: m.track!.tenant,
        })
        .catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITES_AT_ONCE, tracked.length) }, write));
}

const WRITES_AT_ONCE = 100;

/** A job kept in the job store until its time, as far as its `scheduled` record goes. */
interface KeptJob extends SentJob {
  /** When it is to run (epoch milliseconds). */
  readonly dueMs: number;
}

/**
 * Record the kept jobs that asked for it as `scheduled`, with their time as `nextAttemptAt`. Best
 * effort, as recordWaiting: the job is kept whatever happens here (its worker's writes record it
 * later; a cancel finds it kept without a record too).
 */
export async function recordScheduled(store: StatusStore | undefined, jobName: string, kept: readonly KeptJob[]): Promise<void> {
  if (store === undefined) return;
  await Promise.all(
    kept
      .filter((m) => m.track !== undefined)
      .map((m) =>
        store
          .transition({
            jobId: m.jobId,
            jobName,
            state: 'scheduled',
            attempt: 0,
            at: new Date(),
            enqueuedAt: m.track!.enqueuedAt,
            parentId: m.track!.parentId,
            tenant: m.track!.tenant,
            nextAttemptAt: new Date(m.dueMs),
          })
          .catch(() => {}),
      ),
  );
}
