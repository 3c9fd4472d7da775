/**
 * The key-value store the fleet-wide protocols are written over (src/fleet/: the dedupe lock,
 * permits, rate limits, allowances and the meters): the few commands they use, with memcached's
 * meanings. memcached's client implements it; so does MemoryKeyValues (sqs-jobs/testing), and both
 * pass one contract test on the real server (test/contracts/key-values-port.test.ts).
 *
 * Values are UTF-8 strings. Expiries are in seconds: 0 for none, else at most
 * MAX_RELATIVE_EXPIRY_S (memcached reads a larger one as a point in time). A version (`cas`) names
 * a key's value as read: a conditional write or delete acts only while the key still holds it. A
 * store that keeps no versions (memcached -C) answers version 0, which no conditional write
 * matches.
 */
export interface KeyValues {
  /** The value, or null when the key does not exist. */
  get(key: string): Promise<string | null>;
  /** The value and its version, or null when the key does not exist. */
  getWithCas(key: string): Promise<{ readonly value: string; readonly cas: bigint } | null>;
  /** Stores `value` unless the key exists: false when it does. */
  add(key: string, value: string, expires: number): Promise<boolean>;
  /** Stores `value`, over whatever the key held. */
  set(key: string, value: string, expires: number): Promise<void>;
  /** Stores `value` only over the version `cas`: false when the key changed or is gone. */
  setIf(key: string, value: string, expires: number, cas: bigint): Promise<boolean>;
  /** A new expiry: false when the key does not exist. */
  touch(key: string, expires: number): Promise<boolean>;
  /** False when the key did not exist. */
  delete(key: string): Promise<boolean>;
  /** Deletes the key only at the version `cas`: false when it changed or is gone. */
  deleteIf(key: string, cas: bigint): Promise<boolean>;
  /** Adds `amount` to a counter; a missing one is created holding `initial` (and `expires`). The value after. */
  increment(key: string, amount: number, initial: number, expires: number): Promise<number>;
  /** Appends to an existing key's value: false when the key does not exist, or the value would pass the item size (1 MB). */
  append(key: string, value: string): Promise<boolean>;
  /**
   * A key starting with `name` kept where `key` is (the same server of several): what is said of
   * one is true of the other (both were lost when that server restarted). Optional: a store on
   * one server keeps every key in one place, and `name` serves.
   */
  companion?(key: string, name: string): string;
}

/**
 * How a protocol makes its calls on a store: through `call`, telling the store's availability by
 * what it answers. A call rejects when the store cannot be reached or answered with an error
 * (KeyValueAnswer: it is up); the protocol then answers as it does without the store.
 */
export interface KeyValueCalls {
  /** Make one call on the store (rejects when closed, or when the store cannot be reached). */
  call<T>(op: (kv: KeyValues) => Promise<T>): Promise<T>;
  /** A call answered: the store is up. */
  ok<T>(result: T): T;
  /** A call failed: answer `result` (the store is down). */
  failed<T>(result: T, error: unknown): T;
  /** Closed for good: calls reject. */
  readonly closed: boolean;
}

/** memcached reads an expiry past 30 days as a point in time: relative expiries are kept under it. */
export const MAX_RELATIVE_EXPIRY_S = 30 * 24 * 3600 - 1;

/** The store answered a request with an error (a value too large, a counter that holds no number): it works, and is up. */
export class KeyValueAnswer extends Error {
  override name = 'KeyValueAnswer';
}
