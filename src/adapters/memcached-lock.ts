import memjs from 'memjs';
import type { ClaimingMessage, ClaimResult, ExtendResult, JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';
import { isMemcachedAnswer, memcachedPermits } from './memcached-permits.js';
import { memcachedRateLimits } from './memcached-rate-limits.js';
import { memcachedAllowances } from './memcached-allowances.js';
import type { Allowances } from '../ports/allowances.js';
import type { RateLimits } from '../ports/rate-limits.js';
import { memcachedDrainMeter } from './memcached-drain-meter.js';
import type { DrainMeter } from '../ports/drain-meter.js';
import type { TenantMeter } from '../ports/tenant-meter.js';
import { memcachedTenantMeter } from './memcached-tenant-meter.js';

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
/** When a release that failed is tried again (each only deletes a lock this token still holds). */
const RELEASE_RETRIES_MS = [1_000, 5_000];

/** A call that failed on a client already replaced after an earlier failure. */
class StaleClientError extends Error {
  constructor(cause: unknown) {
    super('memcached call failed on a replaced client', { cause });
  }
}
const DONE = 'done:';
const CANCELLED = 'cancelled:';

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
  #client: memjs.Client;
  readonly #createClient: () => memjs.Client;
  readonly #deadlineMs: number;
  readonly #prefix: string;
  readonly #onAvailability: MemcachedLockOptions['onAvailability'];
  #up = true;
  #closed = false;

  constructor(options: MemcachedLockOptions) {
    const timeout = (options.timeoutMs ?? 500) / 1000;
    this.#createClient = () =>
      memjs.Client.create(options.servers, {
        retries: 0,
        failover: false,
        timeout,
        conntimeout: timeout * 2,
        keepAlive: true,
        logger: { log: () => {} },
      });
    this.#client = this.#createClient();
    // memjs's own timer, plus room for a connect and a loaded host: a call still unanswered by then never will be.
    this.#deadlineMs = (options.timeoutMs ?? 500) * 4;
    this.#prefix = options.keyPrefix ?? 'sqsjobs:';
    this.#onAvailability = options.onAvailability;
  }

  /**
   * One memcached call, answered within the deadline whatever memjs does. After a timeout memjs
   * can stay broken: a late reply on the socket it gave up on lands in the read buffer the next
   * socket shares, so every later reply is misread (each call then times out, for good), and that
   * old socket's close can cancel the new one's timer (a call then never settles). So a call that
   * fails or misses the deadline throws, and the client is replaced by a fresh one.
   */
  async #call<T>(op: (client: memjs.Client) => Promise<T>): Promise<T> {
    // After close(), memjs would open a new socket that nothing closes.
    if (this.#closed) throw new Error('the lock is closed');
    const client = this.#client;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`memcached did not answer within ${this.#deadlineMs} ms`)), this.#deadlineMs);
      timer.unref();
    });
    try {
      return await Promise.race([op(client), deadline]);
    } catch (error) {
      if (this.#client !== client) throw new StaleClientError(error);
      // memcached answered (an error status): the connection is fine, keep it.
      if (isMemcachedAnswer(error)) throw error;
      if (!this.#closed) {
        this.#client = this.#createClient();
        // Closed once the calls still in flight on it have had their own deadline: closing it now
        // would leave them unanswered (memjs drops a call whose socket it closes itself).
        setTimeout(() => client.close(), this.#deadlineMs).unref();
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
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
        const { value } = await this.#call((c) => c.get(this.deadLetteredKey(message.messageId)));
        if (value !== null) return this.#ok('dead-lettered');
      }
      if (message?.parentId !== undefined) {
        const { value } = await this.#call((c) => c.get(this.key(message.parentId!)));
        if (value?.toString().startsWith(CANCELLED)) return this.#ok('cancelled');
      }
      const origin = message === undefined ? undefined : (message.originId ?? message.messageId);
      const value = origin === undefined ? RUNNING + token : `${RUNNING}${token}:${origin}`;
      for (let tries = 0; tries < 2; tries++) {
        if (await this.#call((c) => c.add(key, value, { expires: ttlSeconds }))) return this.#ok('claimed');
        const { value: found } = await this.#call((c) => c.get(key));
        if (found === null) continue; // expired between add and get: try once more
        const text = found.toString();
        if (text.startsWith(DONE)) return this.#ok('completed');
        if (text.startsWith(CANCELLED)) return this.#ok('cancelled');
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
      const { value } = await this.#call((c) => c.get(key));
      if (value?.toString().startsWith(CANCELLED)) return this.#ok('cancelled');
      if (value === null || !heldBy(value.toString(), token)) return this.#ok('lost');
      await this.#call((c) => c.touch(key, ttlSeconds));
      return this.#ok('held');
    } catch (error) {
      return this.#failed('unavailable', error);
    }
  }

  async complete(jobId: string, token: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#call((c) => c.set(this.key(jobId), DONE + token, { expires: ttlSeconds }));
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async release(jobId: string, token: string): Promise<boolean> {
    if (await this.#release(jobId, token)) return true;
    // A lock left behind would hold the job until its TTL: its next deliveries would read "running
    // under this same message" and be handed back, each spending a receive. Try again a little later.
    for (const delayMs of RELEASE_RETRIES_MS) {
      const timer = setTimeout(() => {
        if (!this.#closed) void this.#release(jobId, token);
      }, delayMs);
      timer.unref();
    }
    return false;
  }

  async #release(jobId: string, token: string): Promise<boolean> {
    const key = this.key(jobId);
    try {
      const { value } = await this.#call((c) => c.get(key));
      if (value !== null && heldBy(value.toString(), token)) await this.#call((c) => c.delete(key));
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async markDeadLettered(messageId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#call((c) => c.set(this.deadLetteredKey(messageId), '1', { expires: ttlSeconds }));
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  async cancel(jobId: string, ttlSeconds: number): Promise<boolean> {
    try {
      await this.#call((c) => c.set(this.key(jobId), CANCELLED + new Date().toISOString(), { expires: ttlSeconds }));
      return this.#ok(true);
    } catch (error) {
      return this.#failed(false, error);
    }
  }

  /** Fleet-wide permits on the same memcached (tenant caps, exclusive batch keys): see Permits. */
  readonly permits: Permits = memcachedPermits(
    { call: (op) => this.#call(op), ok: (r) => this.#ok(r), failed: (r, e) => this.#failed(r, e) },
    (key, index) => `${this.#prefix}slot/${key}/${index}`,
  );

  /** Fleet-wide starts per second per job (a job's rateLimit), on the same memcached: see RateLimits. */
  readonly rates: RateLimits = memcachedRateLimits(
    { call: (op) => this.#call(op), ok: (r) => this.#ok(r), failed: (r, e) => this.#failed(r, e) },
    (name) => this.#prefix + name,
  );

  /** Spillover allowances shared by every producer, on the same memcached: see Allowances. */
  readonly allowances: Allowances = memcachedAllowances(
    { call: (op) => this.#call(op), ok: (r) => this.#ok(r), failed: (r, e) => this.#failed(r, e) },
    (name) => this.#prefix + name,
  );

  /** How many messages the workers have deleted per queue, on the same memcached (admission reads it): see DrainMeter. */
  readonly drains: DrainMeter = memcachedDrainMeter(
    { call: (op) => this.#call(op), ok: (r) => this.#ok(r), failed: (r, e) => this.#failed(r, e) },
    (name) => this.#prefix + name,
  );

  /** What the workers saw of each tenant, per queue, on the same memcached (the dashboard's tenants page reads it): see TenantMeter. */
  readonly tenants: TenantMeter = memcachedTenantMeter(
    { call: (op) => this.#call(op), ok: (r) => this.#ok(r), failed: (r, e) => this.#failed(r, e) },
    (name) => this.#prefix + name,
  );

  close(): void {
    this.#closed = true;
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
    // A late failure of a client already replaced says nothing about memcached now.
    if (error instanceof StaleClientError) return result;
    if (this.#up) {
      this.#up = false;
      this.#onAvailability?.(false, error instanceof Error ? error : new Error(String(error)));
    }
    return result;
  }
}
