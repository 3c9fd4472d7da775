import { CANCELLED, claimTokenOf, DONE, heldBy, holderOf, LEAVING, leavingValue, runningUnder, runningValue } from '../core/lock-values.js';
import { type ClaimingMessage, type ClaimResult, deadLetterCheckOf, type ExtendResult, type JobLock } from '../ports/lock.js';

/**
 * The dedupe lock in memory, for tests that run a worker without memcached. It passes the same
 * contract as MemcachedLock on a real memcached (test/contracts/lock-port.test.ts). `down = true`
 * makes every call answer as an unreachable memcached does.
 */
export class MemoryLock implements JobLock {
  readonly #keys = new Map<string, { value: string; expiresAt: number }>();
  down = false;

  /** See JobLock.claim; 'unavailable' while `down`. */
  async claim(jobId: string, token: string, ttlSeconds: number, message?: ClaimingMessage): Promise<ClaimResult> {
    if (this.down) return 'unavailable';
    const dead = message === undefined ? undefined : deadLetterCheckOf(message);
    if (dead !== undefined && this.#get(`dlq/${dead}`) !== undefined) return 'dead-lettered';
    if (message?.parentId !== undefined && this.#get(message.parentId)?.startsWith(CANCELLED)) return 'cancelled';
    const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
    const found = this.#get(jobId);
    if (found?.startsWith(DONE)) return 'completed';
    if (found?.startsWith(CANCELLED)) return 'cancelled';
    const holder = found === undefined ? undefined : holderOf(found);
    const another = holder !== undefined && origin !== undefined && holder !== origin;
    // Free, or left by a message on its way to the DLQ (leave) and this is another message: claimed.
    if (found === undefined || (found.startsWith(LEAVING) && another)) {
      this.#set(jobId, runningValue(token, origin), ttlSeconds);
      return 'claimed';
    }
    return another && !found.startsWith(LEAVING) ? 'running-copy' : 'running';
  }

  /** See JobLock.extend; 'unavailable' while `down`. */
  async extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult> {
    if (this.down) return 'unavailable';
    const found = this.#get(jobId);
    if (found?.startsWith(CANCELLED)) return 'cancelled';
    if (found === undefined || !runningUnder(found, token)) return 'lost';
    this.#set(jobId, found, ttlSeconds);
    return 'held';
  }

  /** See JobLock.complete; false while `down`. */
  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(jobId, DONE + token, ttlSeconds);
    return true;
  }

  /** See JobLock.release; false while `down`. */
  async release(jobId: string, token: string): Promise<boolean> {
    if (this.down) return false;
    const found = this.#get(jobId);
    if (found !== undefined && heldBy(found, token)) this.#keys.delete(jobId);
    return true;
  }

  /** See JobLock.leave; false while `down`. */
  async leave(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    const found = this.#get(jobId);
    if (found === undefined || !runningUnder(found, token)) return false;
    this.#set(jobId, leavingValue(found), ttlSeconds);
    return true;
  }

  /** See JobLock.holder; undefined while `down`. */
  async holder(jobId: string): Promise<string | undefined> {
    if (this.down) return undefined;
    const found = this.#get(jobId);
    return found === undefined ? undefined : claimTokenOf(found);
  }

  async markDeadLettered(originId: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(`dlq/${originId}`, '1', ttlSeconds);
    return true;
  }

  async cancel(jobId: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(jobId, CANCELLED + new Date().toISOString(), ttlSeconds);
    return true;
  }

  /** Does nothing: the keys stay. */
  close(): void {}

  #get(key: string): string | undefined {
    const entry = this.#keys.get(key);
    if (entry === undefined || entry.expiresAt <= Date.now()) {
      this.#keys.delete(key);
      return undefined;
    }
    return entry.value;
  }

  #set(key: string, value: string, ttlSeconds: number): void {
    this.#keys.set(key, { value, expiresAt: Date.now() + ttlSeconds * 1000 });
  }
}
