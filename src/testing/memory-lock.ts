import type { ClaimingMessage, ClaimResult, ExtendResult, JobLock } from '../ports/lock.js';

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
    if (message !== undefined && message.receiveCount > 1 && this.#get(`dlq/${message.messageId}`) !== undefined) return 'dead-lettered';
    if (message?.parentId !== undefined && this.#get(message.parentId)?.startsWith('cancelled:')) return 'cancelled';
    const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
    const found = this.#get(jobId);
    if (found?.startsWith('done:')) return 'completed';
    if (found?.startsWith('cancelled:')) return 'cancelled';
    const holder = found?.split(':')[2];
    const another = holder !== undefined && origin !== undefined && holder !== origin;
    // Free, or left by a message on its way to the DLQ (leave) and this is another message: claimed.
    if (found === undefined || (found.startsWith('leaving:') && another)) {
      this.#set(jobId, origin === undefined ? `running:${token}` : `running:${token}:${origin}`, ttlSeconds);
      return 'claimed';
    }
    return another && found.startsWith('running:') ? 'running-copy' : 'running';
  }

  /** See JobLock.extend; 'unavailable' while `down`. */
  async extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult> {
    if (this.down) return 'unavailable';
    const found = this.#get(jobId);
    if (found?.startsWith('cancelled:')) return 'cancelled';
    if (found === undefined || !heldBy(found, token, ['running:'])) return 'lost';
    this.#set(jobId, found, ttlSeconds);
    return 'held';
  }

  /** See JobLock.complete; false while `down`. */
  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(jobId, `done:${token}`, ttlSeconds);
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
    if (found === undefined || !heldBy(found, token, ['running:'])) return false;
    this.#set(jobId, `leaving:${found.slice('running:'.length)}`, ttlSeconds);
    return true;
  }

  async markDeadLettered(messageId: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(`dlq/${messageId}`, '1', ttlSeconds);
    return true;
  }

  async cancel(jobId: string, ttlSeconds: number): Promise<boolean> {
    if (this.down) return false;
    this.#set(jobId, `cancelled:${new Date().toISOString()}`, ttlSeconds);
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

/** A value written by the claim with `token` (`running:`), or by its leave (`leaving:`). */
function heldBy(value: string, token: string, states: readonly string[] = ['running:', 'leaving:']): boolean {
  return states.some((state) => value === state + token || value.startsWith(`${state}${token}:`));
}
