import { CANCELLED, claimTokenOf, DONE, heldBy, holderOf, LEAVING, leavingValue, runningUnder, runningValue } from '../core/lock-values.js';
import type { KeyValueCalls } from '../ports/key-values.js';
import { type ClaimingMessage, type ClaimResult, deadLetterCheckOf, type ExtendResult, type JobLock } from '../ports/lock.js';

/** How long keptSince trusts what it read: a restart is noticed this much later at most (then the store is asked). */
const KEPT_SINCE_MS = 1_000;
/** When a release that failed is tried again (each only deletes a lock this token still holds). */
const RELEASE_RETRIES_MS = [1_000, 5_000];

/**
 * The dedupe lock's protocol (JobLock), written once over a key-value store: MemcachedLock runs it
 * on memcached, MemoryLock on MemoryKeyValues. A job id's key holds what core/lock-values.ts says,
 * under the key prefix; a dead-lettered message is remembered under `dlq/<origin>`.
 */
export class KeyValueLock implements JobLock {
  readonly #kv: KeyValueCalls;
  readonly #prefix: string;
  /** keptSince's last reading of each server's key. */
  readonly #since = new Map<string, { readonly since: number; readonly readAt: number }>();

  constructor(kv: KeyValueCalls, keyPrefix: string) {
    this.#kv = kv;
    this.#prefix = keyPrefix;
  }

  /** The key of `jobId`'s lock: the key prefix (MemcachedLock's `keyPrefix`, default `sqsjobs:`; none in memory), then the job id. */
  key(jobId: string): string {
    return `${this.#prefix}${jobId}`;
  }

  /** Where a dead-lettered message is remembered; `/` cannot occur in a job id, so no job's key collides. */
  deadLetteredKey(originId: string): string {
    return `${this.#prefix}dlq/${originId}`;
  }

  /** Claims the job id with `add`, reading the key when it exists; see JobLock.claim. */
  async claim(jobId: string, token: string, ttlSeconds: number, message?: ClaimingMessage): Promise<ClaimResult> {
    const key = this.key(jobId);
    try {
      const dead = message === undefined ? undefined : deadLetterCheckOf(message);
      if (dead !== undefined && (await this.#kv.call((c) => c.get(this.deadLetteredKey(dead)))) !== null)
        return this.#kv.ok('dead-lettered');
      if (message?.parentId !== undefined) {
        const value = await this.#kv.call((c) => c.get(this.key(message.parentId!)));
        if (value?.startsWith(CANCELLED)) return this.#kv.ok('cancelled');
      }
      const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
      const value = runningValue(token, origin);
      for (let tries = 0; tries < 2; tries++) {
        if (await this.#kv.call((c) => c.add(key, value, ttlSeconds))) return this.#kv.ok('claimed');
        const found = await this.#kv.call((c) => c.getWithCas(key));
        if (found === null) continue; // expired between add and get: try once more
        if (found.value.startsWith(DONE)) return this.#kv.ok('completed');
        if (found.value.startsWith(CANCELLED)) return this.#kv.ok('cancelled');
        const holder = holderOf(found.value);
        const another = holder !== undefined && origin !== undefined && holder !== origin;
        if (!found.value.startsWith(LEAVING)) return this.#kv.ok(another ? 'running-copy' : 'running');
        // The message on its way to the DLQ, delivered again; or, where memcached keeps no item
        // versions (-C: CAS 0), another message, handed back until the leaving claim is released.
        if (!another || found.cas === 0n) return this.#kv.ok('running');
        // Left by a message on its way to the DLQ: free for this one. Deleted as read, then added again.
        await this.#kv.call((c) => c.deleteIf(key, found.cas));
      }
      return this.#kv.ok('running');
    } catch (error) {
      return this.#kv.failed('unavailable', error);
    }
  }

  /** Touches the key if this token still holds it; see JobLock.extend. */
  async extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult> {
    const key = this.key(jobId);
    try {
      const value = await this.#kv.call((c) => c.get(key));
      if (value?.startsWith(CANCELLED)) return this.#kv.ok('cancelled');
      if (value === null || !runningUnder(value, token)) return this.#kv.ok('lost');
      await this.#kv.call((c) => c.touch(key, ttlSeconds));
      return this.#kv.ok('held');
    } catch (error) {
      return this.#kv.failed('unavailable', error);
    }
  }

  /** Sets the key to `done:<token>`; see JobLock.complete. */
  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#kv.call((c) => c.set(this.key(jobId), DONE + token, ttlSeconds));
      return this.#kv.ok(true);
    } catch (error) {
      return this.#kv.failed(false, error);
    }
  }

  /**
   * Deletes the key if this token still holds it (with the version read: CAS); one that failed is
   * tried again after 1 s and 5 s. See JobLock.release.
   */
  async release(jobId: string, token: string): Promise<boolean> {
    if (await this.#release(jobId, token)) return true;
    // A lock left behind would hold the job until its TTL: its next deliveries would read "running
    // under this same message" and be handed back, each spending a receive. Try again a little later.
    for (const delayMs of RELEASE_RETRIES_MS) {
      const timer = setTimeout(() => {
        if (!this.#kv.closed) void this.#release(jobId, token);
      }, delayMs);
      timer.unref();
    }
    return false;
  }

  async #release(jobId: string, token: string): Promise<boolean> {
    const key = this.key(jobId);
    try {
      // Deleted only as it was read (CAS): a lock that expired meanwhile and was claimed elsewhere stays.
      const found = await this.#kv.call((c) => c.getWithCas(key));
      if (found !== null && heldBy(found.value, token)) await this.#kv.call((c) => c.deleteIf(key, found.cas));
      return this.#kv.ok(true);
    } catch (error) {
      return this.#kv.failed(false, error);
    }
  }

  /**
   * Turns this token's `running:` value into `leaving:`, as read (CAS); see JobLock.leave. False
   * where the store keeps no item versions (memcached -C): a set over what was read cannot be made there.
   */
  async leave(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    const key = this.key(jobId);
    try {
      const found = await this.#kv.call((c) => c.getWithCas(key));
      if (found === null || found.cas === 0n || !runningUnder(found.value, token)) return this.#kv.ok(false);
      return this.#kv.ok(await this.#kv.call((c) => c.setIf(key, leavingValue(found.value), ttlSeconds, found.cas)));
    } catch (error) {
      return this.#kv.failed(false, error);
    }
  }

  /** See JobLock.holder; undefined when the store cannot be asked. */
  async holder(jobId: string): Promise<string | undefined> {
    try {
      const value = await this.#kv.call((c) => c.get(this.key(jobId)));
      return this.#kv.ok(value === null ? undefined : claimTokenOf(value));
    } catch (error) {
      return this.#kv.failed(undefined, error);
    }
  }

  /**
   * See JobLock.keptSince: read from a key that lives as long as the data of the server `jobId`'s
   * key is on, made (holding the time) by the first to miss it; read again at most every
   * KEPT_SINCE_MS. Undefined when the store cannot be reached.
   */
  async keptSince(jobId: string): Promise<number | undefined> {
    try {
      return this.#kv.ok(
        await this.#kv.call(async (c) => {
          // `/` is in no job id: no job's key is this one. With several servers, one per server and server count.
          const key = c.companion?.(this.key(jobId), `${this.#prefix}kept-since`) ?? `${this.#prefix}kept-since/1/0`;
          const seen = this.#since.get(key);
          if (seen !== undefined && Date.now() - seen.readAt < KEPT_SINCE_MS) return seen.since;
          const found = await c.get(key);
          // The time it was missed, read after the miss: no earlier than the server that missed it began.
          const missedAt = String(Date.now());
          const value = found ?? ((await c.add(key, missedAt, 0)) ? missedAt : await c.get(key));
          const since = Number(value);
          if (!Number.isFinite(since)) throw new Error(`memcached's ${key} holds no time`);
          this.#since.set(key, { since, readAt: Date.now() });
          return since;
        }),
      );
    } catch (error) {
      this.#since.clear(); // a server that failed may come back empty
      return this.#kv.failed(undefined, error);
    }
  }

  async markDeadLettered(originId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#kv.call((c) => c.set(this.deadLetteredKey(originId), '1', ttlSeconds));
      return this.#kv.ok(true);
    } catch (error) {
      return this.#kv.failed(false, error);
    }
  }

  async cancel(jobId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#kv.call((c) => c.set(this.key(jobId), CANCELLED + new Date().toISOString(), ttlSeconds));
      return this.#kv.ok(true);
    } catch (error) {
      return this.#kv.failed(false, error);
    }
  }

  /** Ends the store's calls (MemcachedLock closes its connection). */
  close(): void {}
}
