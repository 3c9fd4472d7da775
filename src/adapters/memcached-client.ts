import type { KeyValues } from '../ports/key-values.js';
import { MemcachedServer } from './memcached-server.js';
import type { MemcachedTlsOptions } from './memcached-socket.js';
import { expiryExtras, incrementExtras, MemcachedStatusError, NOT_STORED, Op, parseServers, storeExtras } from './memcached-wire.js';

/** An increment that keeps losing the race to create its counter (each time gone again before it asks) gives up. */
const MAX_INCREMENT_TRIES = 3;

/**
 * A memcached client: `[tls://]host:port[,host:port]` (port 11211 when left out; with `tls://` every
 * server on TLS, verified as `tls` says), a key's server chosen as
 * memjs chooses it (its string hash modulo the server count), so workers on an older sqs-jobs find
 * the same locks. Values are UTF-8 strings; expiries in seconds (0: none). A request fails on a
 * connection error or when its connection is stuck (`timeoutMs` with nothing moving on it, or 4×
 * `timeoutMs`); memcached's error answers reject with a
 * MemcachedStatusError; misses and refusals answer null or false.
 */
export class MemcachedClient implements KeyValues {
  readonly #servers: MemcachedServer[];

  constructor(servers: string, timeoutMs: number, tls?: MemcachedTlsOptions) {
    const list = parseServers(servers);
    if (tls !== undefined && !list.tls) throw new Error(`memcached "${servers}": TLS options need a tls:// server list`);
    this.#servers = list.servers.map(({ host, port }) => new MemcachedServer(host, port, timeoutMs, list.tls ? (tls ?? {}) : undefined));
  }

  #server(key: string): MemcachedServer {
    return this.#servers[this.#indexOf(key)]!;
  }

  #indexOf(key: string): number {
    const count = this.#servers.length;
    if (count === 1) return 0;
    let hash = 0;
    for (let i = 0; i < key.length; i++) hash = (31 * hash + key.charCodeAt(i)) << 0;
    return Math.abs(hash) % count;
  }

  /**
   * `name/<server count>/<n>`, the first such key on `key`'s server (KeyValues.companion): a list
   * of another length (a server added or taken away, which moves keys) names other companions.
   */
  companion(key: string, name: string): string {
    const count = this.#servers.length;
    const server = this.#indexOf(key);
    let n = 0;
    while (this.#indexOf(`${name}/${count}/${n}`) !== server) n++;
    return `${name}/${count}/${n}`;
  }

  get(key: string): Promise<string | null> {
    return this.#server(key).send(Op.GetQ, key, undefined, undefined);
  }
  /** Stores `value` unless the key exists: false when it does. */
  add(key: string, value: string, expires: number): Promise<boolean> {
    return this.#server(key).send(Op.AddQ, key, storeExtras(expires), value);
  }
  set(key: string, value: string, expires: number): Promise<void> {
    return this.#server(key).send(Op.SetQ, key, storeExtras(expires), value);
  }
  /** False when the key does not exist. */
  touch(key: string, expires: number): Promise<boolean> {
    return this.#server(key).send(Op.Touch, key, expiryExtras(expires), undefined);
  }
  /** The value and its version (CAS), for deleteIf(); null when the key does not exist. */
  getWithCas(key: string): Promise<{ readonly value: string; readonly cas: bigint } | null> {
    return this.#server(key).send(Op.GetQ, key, undefined, undefined, 'read');
  }
  /** False when the key did not exist. */
  delete(key: string): Promise<boolean> {
    return this.#server(key).send(Op.DeleteQ, key, undefined, undefined);
  }
  /** Stores `value` only over the item as it was when read (its `cas` from getWithCas()): false when it changed or is gone. */
  async setIf(key: string, value: string, expires: number, cas: bigint): Promise<boolean> {
    return (await this.#server(key).send<false | undefined>(Op.SetQ, key, storeExtras(expires), value, cas)) !== false;
  }
  /** Deletes the key only as it was when read (its `cas` from getWithCas()): false when it changed or is gone. */
  deleteIf(key: string, cas: bigint): Promise<boolean> {
    return this.#server(key).send(Op.DeleteQ, key, undefined, undefined, cas);
  }
  /** Adds `amount`; a missing key is created holding `initial`. The counter's value after. */
  async increment(key: string, amount: number, initial: number, expires: number): Promise<number> {
    const server = this.#server(key);
    const extras = incrementExtras(amount, initial, expires);
    // memcached creates a missing counter by a miss, then an add: a connection whose add lost to
    // another's is answered null (nothing done), and asks again, now finding the counter.
    for (let tries = 1; ; tries++) {
      const value = await server.send<number | null>(Op.Increment, key, extras, undefined);
      if (value !== null) return value;
      if (tries === MAX_INCREMENT_TRIES) throw new MemcachedStatusError(Op.Increment, NOT_STORED);
    }
  }
  /** Appends to an existing key's value: false when the key does not exist. */
  append(key: string, value: string): Promise<boolean> {
    return this.#server(key).send(Op.AppendQ, key, undefined, value);
  }

  close(): void {
    for (const s of this.#servers) s.close();
  }
}
