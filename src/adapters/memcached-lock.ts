import memjs from 'memjs';
import type { ClaimingMessage, ClaimResult, ConcurrencySlots, ExtendResult, JobLock } from '../ports/lock.js';

export interface MemcachedLockOptions {
  /** host:port[,host:port] */
  readonly servers: string;
  readonly keyPrefix?: string;
  /** Per-request timeout. */
  readonly timeoutMs?: number;
  /** Called on the first error of an outage (up: false) and the first success after it (up: true). */
  readonly onAvailability?: (up: boolean, error?: Error) => void;
}

const RUNNING = 'running:';
const DONE = 'done:';

/** A lock value `running:<token>[:<messageId>]` written by the claim with this token. */
function heldBy(value: string, token: string): boolean {
  const mine = RUNNING + token;
  return value === mine || value.startsWith(`${mine}:`);
}

/** The message id a `running:` value names; undefined when the holder did not say (older versions). */
function holderMessageId(value: string): string | undefined {
  const rest = value.slice(RUNNING.length);
  const colon = rest.indexOf(':');
  return colon === -1 ? undefined : rest.slice(colon + 1);
}

/** JobLock on memcached through memjs, with retries off: a retried `add` can lie (see lock.ts). */
export class MemcachedLock implements JobLock {
  readonly #client: memjs.Client;
  readonly #prefix: string;
  readonly #onAvailability: MemcachedLockOptions['onAvailability'];
  #up = true;

  constructor(options: MemcachedLockOptions) {
    const timeout = (options.timeoutMs ?? 500) / 1000;
    this.#client = memjs.Client.create(options.servers, {
      retries: 0,
      failover: false,
      timeout,
      conntimeout: timeout * 2,
      keepAlive: true,
      logger: { log: () => {} },
    });
    this.#prefix = options.keyPrefix ?? 'sqsjobs:';
    this.#onAvailability = options.onAvailability;
  }

  key(jobId: string): string {
    return `${this.#prefix}${jobId}`;
  }

  /** Where a dead-lettered message is remembered; `/` cannot occur in a job id, so no job's key collides. */
  deadLetteredKey(messageId: string): string {
    return `${this.#prefix}dlq/${messageId}`;
  }

  async claim(jobId: string, token: string, ttlSeconds: number, message?: ClaimingMessage): Promise<ClaimResult> {
    const key = this.key(jobId);
    try {
      if (message !== undefined && message.receiveCount > 1) {
        const { value } = await this.#client.get(this.deadLetteredKey(message.messageId));
        if (value !== null) return this.#ok('dead-lettered');
      }
      const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
      const value = origin === undefined ? RUNNING + token : `${RUNNING}${token}:${origin}`;
      for (let tries = 0; tries < 2; tries++) {
        if (await this.#client.add(key, value, { expires: ttlSeconds })) return this.#ok('claimed');
        const { value: found } = await this.#client.get(key);
        if (found === null) continue; // expired between add and get: try once more
        const text = found.toString();
        if (text.startsWith(DONE)) return this.#ok('completed');
        const holder = holderMessageId(text);
        return this.#ok(holder !== undefined && origin !== undefined && holder !== origin ? 'running-copy' : 'running');
      }
      return this.#ok('running');
    } catch (error) {
      return this.#failed('unavailable', error);
    }
  }

  async extend(jobId: string, token: string, ttlSeconds: number): Promise<ExtendResult> {
    const key = this.key(jobId);
    try {
      const { value } = await this.#client.get(key);
      if (value === null || !heldBy(value.toString(), token)) return this.#ok('lost');
      await this.#client.touch(key, ttlSeconds);
      return this.#ok('held');
    } catch (error) {
      return this.#failed('unavailable', error);
    }
  }

  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#client.set(this.key(jobId), DONE + token, { expires: ttlSeconds });
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async release(jobId: string, token: string): Promise<boolean> {
    const key = this.key(jobId);
    try {
      const { value } = await this.#client.get(key);
      if (value !== null && heldBy(value.toString(), token)) await this.#client.delete(key);
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async markDeadLettered(messageId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#client.set(this.deadLetteredKey(messageId), '1', { expires: ttlSeconds });
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  /** Fleet-wide concurrency slots on the same memcached (see ConcurrencySlots). */
  readonly slots: ConcurrencySlots = {
    take: async (key, cap, token, ttlSeconds) => {
      if (!Number.isSafeInteger(cap) || cap < 1) return 'unavailable';
      try {
        // Start at a random slot, so workers do not all race for slot 0.
        const first = Math.floor(Math.random() * cap);
        for (let i = 0; i < cap; i++) {
          const slot = (first + i) % cap;
          if (await this.#client.add(this.#slotKey(key, slot), token, { expires: ttlSeconds })) return this.#ok(slot);
        }
        return this.#ok('full' as const);
      } catch (error) {
        return this.#failed('unavailable' as const, error);
      }
    },
    extend: async (key, slot, token, ttlSeconds) => {
      try {
        const { value } = await this.#client.get(this.#slotKey(key, slot));
        if (value !== null && value.toString() === token) await this.#client.touch(this.#slotKey(key, slot), ttlSeconds);
      } catch (error) {
        this.#failed(undefined, error);
      }
    },
    release: async (key, slot, token) => {
      try {
        const { value } = await this.#client.get(this.#slotKey(key, slot));
        if (value !== null && value.toString() === token) await this.#client.delete(this.#slotKey(key, slot));
      } catch (error) {
        this.#failed(undefined, error);
      }
    },
  };

  #slotKey(key: string, slot: number): string {
    // A tenant is printable ASCII without spaces (the envelope's rule), so it fits a memcached key.
    return `${this.#prefix}slot/${key}/${slot}`;
  }

  close(): void {
    this.#client.close();
  }

  #ok<T>(result: T): T {
    if (!this.#up) {
      this.#up = true;
      this.#onAvailability?.(true);
    }
    return result;
  }

  #failed<T>(result: T, error: unknown): T {
    if (this.#up) {
      this.#up = false;
      this.#onAvailability?.(false, error instanceof Error ? error : new Error(String(error)));
    }
    return result;
  }
}
