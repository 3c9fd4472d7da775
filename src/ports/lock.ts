/**
 * The dedupe lock: one job id runs in one place at a time, and a completed job id is not run again.
 *
 * ```text
 *   claim:    add(key, running:<token>:<origin message id>, ttl)
 *               → stored: we hold it
 *               → exists: get(key) says done          → a duplicate of a completed job
 *                                       running, this message → the same SQS message delivered again
 *                                       running, another one  → a copy: another message carries the job
 *   extend:   get(key) is still ours → touch(key, ttl);  someone else's → the lock was lost
 *   complete: set(key, done:<token>, completedTtl) after success
 *   release:  delete(key) if it is still ours
 *   leave:    (key is ours) → leaving:<token>:<origin message id>, before a DLQ send: a claim for
 *             that message reads running; a claim for another message deletes it and claims
 *   cancel:   set(key, cancelled:<time>, ttl): a later claim reads cancelled (the job is not run),
 *             and the holder's next extend reads cancelled (its handler's signal fires)
 * ```
 *
 * Dead-lettered messages are remembered by origin message id, not job id: after a DLQ send whose delete
 * failed, the same SQS message (or a copy the worker re-sent of it, which names it as its origin)
 * comes back and must not run again; a replay from the DLQ is a new message with the same job id
 * and must run. So `markDeadLettered(originId)` sets its own key, the job id's lock is released,
 * and `claim` asks for that key only on a redelivery (receive count > 1) or a re-sent copy
 * (deadLetterCheckOf).
 *
 * A job on its way to the DLQ is let go of in two steps. Before the send, `leave` frees the job id
 * for every other message (a replay may send one as soon as the DLQ holds the job, and it must
 * run) while keeping it against this one: a copy of the same message, delivered again meanwhile,
 * even with a receive count of 1, reads 'running' rather than running the job a second time. After
 * the send, the message is marked dead-lettered and the job id released.
 *
 * A fan-out child's claim also reads its parent's key: a cancelled parent cancels its children not
 * yet run (one more get, for children only).
 *
 * The token is new for every claim (not per worker), so a redelivery to the same process while the
 * first run still goes on is refused like any other.
 *
 * An error or a timeout is "unavailable", never "taken": a retried `add` whose first try succeeded
 * would otherwise read as "exists" and skip a job that nobody runs. Implementations answer
 * 'unavailable' (or false) rather than throw.
 *
 * Extend and release read the key and then write it. Release deletes only the version it read
 * (memcached's CAS, on unless memcached runs with `-C`, ElastiCache's `cas_disabled`), so a lock
 * that expired meanwhile and was claimed elsewhere is never deleted;
 * memcached's touch takes no CAS, so in the narrow gap of an extend such a lock could have its TTL
 * renewed once (it is held a little longer, never lost).
 */
export type ClaimResult =
  /** This claim holds the job id now. */
  | 'claimed'
  /** The job id completed: this message is a duplicate. */
  | 'completed'
  /** This very message was sent to the DLQ already (its delete failed): it is a leftover. */
  | 'dead-lettered'
  /**
   * The job runs under this same SQS message elsewhere (a redelivery), or under a holder that did
   * not say; or that message is on its way to the DLQ (`leave`).
   */
  | 'running'
  /** The job runs under another SQS message: this message is a redundant copy of it. */
  | 'running-copy'
  /** The job (or the fan-out it is a child of) was cancelled: it is not to run. */
  | 'cancelled'
  | 'unavailable';
/** `cancelled`: the job was cancelled while it ran; its holder is to stop it. */
export type ExtendResult = 'held' | 'lost' | 'cancelled' | 'unavailable';

/** The SQS message a claim is made for. */
export interface ClaimingMessage {
  readonly messageId: string;
  /**
   * The message the job's lock names: `messageId`, or for a copy the worker re-sent, the MessageId
   * of the message it was re-sent from (a re-send is the same delivery, not a second one).
   */
  readonly originId?: string;
  /** SQS ApproximateReceiveCount: a message seen for the first time, not a re-sent copy, cannot have been dead-lettered. */
  readonly receiveCount: number;
  /** The fan-out the job is a child of: its cancel mark cancels this job too. */
  readonly parentId?: string;
}

/**
 * The origin id a claim for `m` looks up among the dead-lettered (markDeadLettered), or undefined
 * when it need not look: a message on its first receive that no worker re-sent cannot be a leftover.
 */
export function deadLetterCheckOf(m: ClaimingMessage): string | undefined {
  const origin = m.originId ?? m.messageId;
  return m.receiveCount > 1 || origin !== m.messageId ? origin : undefined;
}

/**
 * The dedupe lock port (protocol above). MemcachedLock (sqs-jobs/adapters) and MemoryLock
 * (sqs-jobs/testing) implement it; the worker's `lock` option takes your own. No method throws:
 * an error or a timeout answers 'unavailable' (or false), never "taken". TTLs are in seconds.
 */
export interface JobLock {
  /**
   * Claim `jobId` for `ttlSeconds` under `token` (new for every claim). `message` adds the
   * dead-letter and parent checks, and tells a redelivery ('running') from a copy ('running-copy').
   * Only 'claimed' lets the caller run the job; 'unavailable' means unknown (the worker then runs it
   * without the lock, or hands it back with lockFailClosed).
   */
  claim(jobId: string, token: string, ttlSeconds: number, message?: ClaimingMessage): Promise<ClaimResult>;
  /**
   * Renew `token`'s claim for `ttlSeconds` (each heartbeat): 'held'; 'lost' when the key is gone or
   * another token holds it; 'cancelled' when the job was cancelled; 'unavailable' when unknown (not lost).
   */
  extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult>;
  /** After a run that succeeded: mark `jobId` done for `ttlSeconds` (completedTtlSeconds), so later claims read 'completed'. False: not written. */
  complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean>;
  /**
   * When the run ends without success: delete the claim if `token` still holds it (a cancel mark
   * stays), so the job id can be claimed again at once. True: `token` no longer holds it; false: unknown.
   */
  release(jobId: string, token: string): Promise<boolean>;
  /**
   * Before its message goes to the DLQ: if `token` holds the job id, keep it for `ttlSeconds`
   * against that message only (its claims read 'running'); a claim for any other message takes
   * it. `release` with the same token ends it. True: done; false: not held by `token`, or unknown.
   * Optional: without it the worker releases the job id before the send, and a copy of the message
   * delivered in that moment may run the job again.
   */
  leave?(jobId: string, token: string, ttlSeconds: number): Promise<boolean>;
  /**
   * The token of the claim holding `jobId` (running or leaving); undefined when none does, or
   * unknown. The worker asks it of a message that came back while its job id is held under it, to
   * count each run that never finished once. Optional: without it every such return counts one.
   */
  holder?(jobId: string): Promise<string | undefined>;
  /**
   * Since when (epoch ms) the lock has kept every mark written for `jobId`: a cancel mark written
   * before then may be forgotten (memcached restarted or was flushed). Undefined when it cannot
   * say now. Optional: a lock without it is taken to forget nothing. The worker asks it of a
   * message sent before then, and then asks the job store (status/stored-cancels.ts).
   */
  keptSince?(jobId: string): Promise<number | undefined>;
  /**
   * Remember for `ttlSeconds` that the SQS message `originId` names (its own id, or for a re-sent
   * copy the id it was re-sent from) is in the DLQ, so a copy of it left behind is not run.
   */
  markDeadLettered(originId: string, ttlSeconds: number): Promise<boolean>;
  /**
   * Mark the job id cancelled for `ttlSeconds`, whatever its key holds: workers read the mark when
   * they claim the job (and its children) or extend its lock. False: it could not be written.
   * Optional: a lock without it cannot carry a cancel (cancelJob refuses).
   */
  cancel?(jobId: string, ttlSeconds: number): Promise<boolean>;
  /** Close its connections. The worker calls it when it stops, on a lock passed as `lock` too. */
  close(): void;
}

/** Used when no memcached is configured: every claim succeeds, nothing is remembered. */
export class NoLock implements JobLock {
  async claim(): Promise<ClaimResult> {
    return 'claimed';
  }
  async extend(): Promise<ExtendResult> {
    return 'held';
  }
  async complete(): Promise<boolean> {
    return true;
  }
  async release(): Promise<boolean> {
    return true;
  }
  async markDeadLettered(): Promise<boolean> {
    return true;
  }
  close(): void {}
}
