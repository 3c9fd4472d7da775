import memjs from 'memjs';
import type { ClaimResult, ExtendResult, JobLock } from './lock.js';

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
const FINISHED = ['done:', 'dead:'];

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

  async claim(jobId: string, token: string, ttlSeconds: number): Promise<ClaimResult> {
    const key = this.key(jobId);
    try {
      for (let tries = 0; tries < 2; tries++) {
        if (await this.#client.add(key, RUNNING + token, { expires: ttlSeconds })) return this.#ok('claimed');
        const { value } = await this.#client.get(key);
        if (value === null) continue; // expired between add and get: try once more
        const text = value.toString();
        return this.#ok(FINISHED.some((marker) => text.startsWith(marker)) ? 'completed' : 'running');
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
      if (value === null || value.toString() !== RUNNING + token) return this.#ok('lost');
      await this.#client.touch(key, ttlSeconds);
      return this.#ok('held');
    } catch (error) {
      return this.#failed('unavailable', error);
    }
  }

  async complete(jobId: string, token: string, ttlSeconds: number, marker: 'done' | 'dead' = 'done'): Promise<boolean> {
    try {
      await this.#client.set(this.key(jobId), `${marker}:${token}`, { expires: ttlSeconds });
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async release(jobId: string, token: string): Promise<boolean> {
    const key = this.key(jobId);
    try {
      const { value } = await this.#client.get(key);
      if (value !== null && value.toString() === RUNNING + token) await this.#client.delete(key);
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
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
