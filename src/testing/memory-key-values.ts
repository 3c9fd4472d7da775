import { KeyValueAnswer, type KeyValueCalls, type KeyValues, MAX_RELATIVE_EXPIRY_S } from '../ports/key-values.js';

/** memcached's default item size (less its item header): an append past it is refused. */
const MAX_ITEM_BYTES = 1024 * 1024;
/** Expired keys are swept out once this many are kept (memcached's LRU does it there). */
const SWEEP_AT = 1_000;

interface Entry {
  value: string;
  cas: bigint;
  /** ms since the epoch; Infinity: never. */
  expiresAt: number;
}

/**
 * A key-value store in memory with memcached's meanings (KeyValues): expiries in seconds (0 none),
 * a version per write, counters made with an initial value, an append refused past 1 MB. It passes the contract test memcached's client passes
 * (test/contracts/key-values-port.test.ts), so the in-memory lock, permits, rate limits,
 * allowances and meters (MemoryLock and the rest) run the same protocols as memcached's, in
 * fleet/. `down = true` makes every call fail as an unreachable memcached does.
 */
export class MemoryKeyValues implements KeyValues, KeyValueCalls {
  readonly #entries = new Map<string, Entry>();
  #version = 0n;
  #sweepAt = SWEEP_AT;
  down = false;

  get closed(): boolean {
    return false;
  }

  call<T>(op: (kv: KeyValues) => Promise<T>): Promise<T> {
    if (this.down) return Promise.reject(new Error('the in-memory store is down (down = true)'));
    return op(this);
  }

  ok<T>(result: T): T {
    return result;
  }

  failed<T>(result: T, _error: unknown): T {
    return result;
  }

  async get(key: string): Promise<string | null> {
    return this.#live(key)?.value ?? null;
  }

  async getWithCas(key: string): Promise<{ readonly value: string; readonly cas: bigint } | null> {
    const e = this.#live(key);
    return e === undefined ? null : { value: e.value, cas: e.cas };
  }

  async add(key: string, value: string, expires: number): Promise<boolean> {
    if (this.#live(key) !== undefined) return false;
    this.#write(key, value, expires);
    return true;
  }

  async set(key: string, value: string, expires: number): Promise<void> {
    this.#write(key, value, expires);
  }

  async setIf(key: string, value: string, expires: number, cas: bigint): Promise<boolean> {
    if (this.#live(key)?.cas !== cas) return false;
    this.#write(key, value, expires);
    return true;
  }

  async touch(key: string, expires: number): Promise<boolean> {
    const e = this.#live(key);
    if (e === undefined) return false;
    e.expiresAt = expiresAt(expires);
    return true;
  }

  async delete(key: string): Promise<boolean> {
    return this.#live(key) !== undefined && this.#entries.delete(key);
  }

  async deleteIf(key: string, cas: bigint): Promise<boolean> {
    return this.#live(key)?.cas === cas && this.#entries.delete(key);
  }

  async increment(key: string, amount: number, initial: number, expires: number): Promise<number> {
    const e = this.#live(key);
    if (e === undefined) {
      this.#write(key, String(initial), expires);
      return initial;
    }
    if (!/^\d+$/.test(e.value)) throw new KeyValueAnswer('a counter that holds no number cannot be incremented');
    const value = Number(e.value) + amount;
    this.#write(key, String(value), undefined);
    return value;
  }

  async append(key: string, value: string): Promise<boolean> {
    const e = this.#live(key);
    if (e === undefined) return false;
    if (Buffer.byteLength(e.value) + Buffer.byteLength(value) > MAX_ITEM_BYTES) return false; // as memcached's quiet append answers
    this.#write(key, e.value + value, undefined);
    return true;
  }

  #live(key: string): Entry | undefined {
    const e = this.#entries.get(key);
    if (e === undefined || e.expiresAt > Date.now()) return e;
    this.#entries.delete(key);
    return undefined;
  }

  /** A new value, a new version; `expires` undefined keeps the key's expiry (an increment, an append). */
  #write(key: string, value: string, expires: number | undefined): void {
    const kept = this.#entries.get(key)?.expiresAt;
    this.#entries.set(key, { value, cas: ++this.#version, expiresAt: expires === undefined ? (kept ?? Infinity) : expiresAt(expires) });
    if (this.#entries.size >= this.#sweepAt) {
      for (const k of [...this.#entries.keys()]) this.#live(k);
      this.#sweepAt = Math.max(SWEEP_AT, 2 * this.#entries.size);
    }
  }
}

/** When an expiry given in seconds (at most MAX_RELATIVE_EXPIRY_S: the port's rule) ends. */
function expiresAt(seconds: number): number {
  return seconds <= 0 ? Number.POSITIVE_INFINITY : Date.now() + Math.min(seconds, MAX_RELATIVE_EXPIRY_S) * 1000;
}

/** What each in-memory twin of a memcached port shares: the store its protocol runs on, and `down`. */
export class OnMemoryStore {
  protected readonly store: MemoryKeyValues;

  /** `store`: the keys it keeps (default: its own; one store may back several, as one memcached does). */
  constructor(store = new MemoryKeyValues()) {
    this.store = store;
  }

  /** True: every call answers as an unreachable memcached does. */
  get down(): boolean {
    return this.store.down;
  }

  set down(down: boolean) {
    this.store.down = down;
  }
}
