import type { OutgoingMessage } from '../core/message.js';
import type { TimedJob } from './timed-jobs.js';

/*
 * Keys on enqueue (`singleton`, `throttle`, `debounce`), kept in the job store: one record per
 * key, `key#<rule>#<job>#<key>`, naming the job that holds it. Producers decide between each
 * other with conditional writes on it, so no memcached and no leader is involved: the store's
 * answer is the decision. A debounced burst's job is a kept job (ports/timed-jobs.ts) of the
 * `debounced` family, sent by the workers' tick when its quiet time is over.
 */

/** Who holds a key: the job, since when (epoch ms), and for a throttle until when. */
export interface KeyRecord {
  readonly jobId: string;
  readonly sinceMs: number;
  /** A throttle's window: the key is free from this time on (epoch ms). */
  readonly untilMs?: number;
  /**
   * The holder may wait until this time (epoch ms: a singleton's job kept until its time, a burst's
   * maxWait): the record outlives it by the store's TTL, not only its writing.
   */
  readonly keepUntilMs?: number;
}

/** What each enqueue of a debounced burst gives its kept job. */
export interface BurstUpdate {
  readonly message: Pick<OutgoingMessage, 'body' | 'attributes' | 'groupId'>;
  readonly queueUrl: string;
  readonly dueMs: number;
}

export interface EnqueueKeys {
  /** The key's record, read consistently; undefined when none holds it. */
  readKey(key: string): Promise<KeyRecord | undefined>;
  /**
   * Make `record` the key's when it is free: nobody holds it, `record.jobId` does already (a retry),
   * `holder` does (the one the caller found and judged done), or the holder's window ended by
   * `nowMs`. Answers undefined when taken, else the record in force (read in the same call).
   */
  takeKey(key: string, record: KeyRecord, free: { readonly holder?: string; readonly nowMs: number }): Promise<KeyRecord | undefined>;
  /** Let go of the key while `jobId` holds it (a send that failed after the key was taken). */
  releaseKey(key: string, jobId: string): Promise<void>;
  /**
   * Start a debounced burst: keep `job` (its `debounced` set) and make it the key's holder, in one
   * write, only while the key holds `holder` or nobody (its record expired). False when another
   * producer moved the key first (nothing is kept then).
   */
  openBurst(key: string, record: KeyRecord, job: TimedJob, holder: string | undefined): Promise<boolean>;
  /**
   * Give a burst's kept job its latest message, queue and due time, only while no tick has ever
   * claimed it (once claimed, its message is what runs) and its time is not later than `dueMs`
   * (producers' writes may land out of order: a burst's time never moves earlier). `closed`: it was
   * claimed, sent or cancelled; `later`: another enqueue of the burst gave it a later time first.
   */
  extendBurst(jobId: string, burst: BurstUpdate): Promise<'extended' | 'closed' | 'later'>;
}
