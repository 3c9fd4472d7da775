import { parseConfig, memcachedTlsOptionSchema } from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import { MemcachedClient } from './memcached-client.js';
import type { MemcachedTlsOptions } from './memcached-socket.js';
import type { KeyValueCalls } from '../ports/key-values.js';

export interface MemcachedConnectionOptions {
  /** `host:port[,host:port]`; `tls://host:port[,host:port]` for TLS on every server (verified: see `tls`). */
  readonly servers: string;
  /**
   * With a `tls://` list: `ca`, the PEM of the CA that signed the servers' certificates (default:
   * Node's own CAs), and `servername`, the name they hold (default: each server's host). Given
   * with a plain list it is a ConfigError.
   */
  readonly tls?: MemcachedTlsOptions;
  /**
   * How long a request may wait for its reply while nothing comes or goes on its connection,
   * connecting included (default 500 ms; looked at every quarter of it), and at most 4× that on a
   * connection that still moves: then it fails, with every other request on its connection, which
   * is replaced.
   */
  readonly timeoutMs?: number;
  /** Called on the first error of an outage (up: false) and the first success after it (up: true). */
  readonly onAvailability?: (up: boolean, error?: Error) => void;
}

/**
 * One memcached client (a request that failed or got stuck is not tried again: a retried `add`
 * can lie, see ports/lock.ts; every request answered or failed within `timeoutMs`; only an `incr`
 * that lost the race to create its counter asks again, see MemcachedClient.increment), and
 * memcached's availability told once per change. The lock and every fleet-wide counter on the same memcached (permits, rate limits, allowances,
 * meters) make their calls through one of these.
 */
export class MemcachedConnection implements KeyValueCalls {
  readonly #client: MemcachedClient;
  readonly #onAvailability: MemcachedConnectionOptions['onAvailability'];
  #up = true;
  #closed = false;

  constructor(options: MemcachedConnectionOptions) {
    const tls =
      options.tls === undefined
        ? undefined
        : parseConfig(memcachedTlsOptionSchema, options.tls, 'options.tls', 'invalid memcached options');
    if (tls !== undefined && !options.servers.trimStart().startsWith('tls://')) {
      throw new ConfigError(`invalid memcached options: options.tls: needs a tls:// server list (got "${options.servers}")`);
    }
    this.#client = new MemcachedClient(options.servers, options.timeoutMs ?? 500, tls);
    this.#onAvailability = options.onAvailability;
  }

  get closed(): boolean {
    return this.#closed;
  }

  call<T>(op: (client: MemcachedClient) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the memcached connection is closed'));
    return op(this.#client);
  }

  close(): void {
    this.#closed = true;
    this.#client.close();
  }

  ok<T>(result: T): T {
    if (!this.#up) {
      this.#up = true;
      this.#onAvailability?.(true);
    }
    return result;
  }

  failed<T>(result: T, error: unknown): T {
    if (this.#up) {
      this.#up = false;
      this.#onAvailability?.(false, error instanceof Error ? error : new Error(String(error)));
    }
    return result;
  }
}
