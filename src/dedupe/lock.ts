/**
 * The dedupe lock: one job id runs in one place at a time, and a completed job id is not run again.
 *
 *   claim:    add(key, running:<token>, ttl)      → stored: we hold it
 *                                                 → exists: get(key) says done → duplicate of a completed job
 *                                                                          running → someone else runs it
 *   extend:   get(key) is still ours → touch(key, ttl);  someone else's → the lock was lost
 *   complete: set(key, done:<token>, completedTtl) after success, or dead:<token> for a short
 *             while after the message went to the DLQ (so a copy whose delete failed is not run
 *             again, while a replay from the DLQ later still runs)
 *   release:  delete(key) if it is still ours
 *
 * The token is new for every claim (not per worker), so a redelivery to the same process while the
 * first run still goes on is refused like any other.
 *
 * An error or a timeout is "unavailable", never "taken": a retried `add` whose first try succeeded
 * would otherwise read as "exists" and skip a job that nobody runs. Implementations answer
 * 'unavailable' (or false) rather than throw.
 *
 * memjs has no CAS, so extend and release read the key and then write it: in the narrow gap
 * between, a lock that just expired and was claimed elsewhere could be touched or deleted.
 */
export type ClaimResult = 'claimed' | 'completed' | 'running' | 'unavailable';
export type ExtendResult = 'held' | 'lost' | 'unavailable';

export interface JobLock {
  claim(jobId: string, token: string, ttlSeconds: number): Promise<ClaimResult>;
  extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult>;
  complete(jobId: string, token: string, ttlSeconds: number, marker?: 'done' | 'dead'): Promise<boolean>;
  release(jobId: string, token: string): Promise<boolean>;
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
  close(): void {}
}
