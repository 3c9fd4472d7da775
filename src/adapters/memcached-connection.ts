import type { Socket } from 'node:net';
import memjs from 'memjs';

/** How the memcached adapters make their calls: within its deadline, and reporting memcached's availability. */
export interface MemcachedCalls {
  call<T>(op: (client: memjs.Client) => Promise<T>): Promise<T>;
  /** A call answered: memcached is up. */
  ok<T>(result: T): T;
  /** A call failed: answer `result` (memcached is down, or this was a late failure of a replaced client). */
  failed<T>(result: T, error: unknown): T;
}

/** memcached reads an expiry past 30 days as a point in time: relative expiries are kept under it. */
export const MAX_RELATIVE_EXPIRY_S = 30 * 24 * 3600 - 1;

/**
 * Whether `error` is memcached's answer to a request (memjs: "MemJS <OP>: <status>", e.g. an
 * append that would pass the item size limit): the connection works, memcached is up.
 */
export function isMemcachedAnswer(error: unknown): boolean {
  return error instanceof Error && /^MemJS [A-Z]+: /.test(error.message);
}

/** A call not answered yet: its deadline, and how it fails. */
interface Pending {
  readonly by: number;
  readonly fail: (error: unknown) => void;
}

/** A call that failed on a client already replaced after an earlier failure. */
class StaleClientError extends Error {
  constructor(cause: unknown) {
    super('memcached call failed on a replaced client', { cause });
  }
}

export interface MemcachedConnectionOptions {
  /** host:port[,host:port] */
  readonly servers: string;
  /** Per-request timeout. */
  readonly timeoutMs?: number;
  /** Called on the first error of an outage (up: false) and the first success after it (up: true). */
  readonly onAvailability?: (up: boolean, error?: Error) => void;
}

/**
 * One memjs client with retries off (a retried `add` can lie, see ports/lock.ts), every call
 * answered within a deadline, and memcached's availability told once per change. The lock and
 * every fleet-wide counter on the same memcached (permits, rate limits, allowances, meters) make
 * their calls through one of these.
 */
export class MemcachedConnection implements MemcachedCalls {
  #client: memjs.Client;
  readonly #createClient: () => memjs.Client;
  readonly #deadlineMs: number;
  readonly #onAvailability: MemcachedConnectionOptions['onAvailability'];
  #up = true;
  #closed = false;
  /** Calls not answered yet, each with its deadline (performance.now(): a clock stepped back does not stretch it). */
  readonly #pending = new Set<Pending>();
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: MemcachedConnectionOptions) {
    const timeout = (options.timeoutMs ?? 500) / 1000;
    this.#createClient = () =>
      corked(
        memjs.Client.create(options.servers, {
          retries: 0,
          failover: false,
          timeout,
          conntimeout: timeout * 2,
          keepAlive: true,
          logger: { log: () => {} },
        }),
      );
    this.#client = this.#createClient();
    // memjs's own timer, plus room for a connect and a loaded host: a call still unanswered by then never will be.
    this.#deadlineMs = (options.timeoutMs ?? 500) * 4;
    this.#onAvailability = options.onAvailability;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * One memcached call, answered within the deadline whatever memjs does. After a timeout memjs
   * can stay broken: a late reply on the socket it gave up on lands in the read buffer the next
   * socket shares, so every later reply is misread (each call then times out, for good), and that
   * old socket's close can cancel the new one's timer (a call then never settles). So a call that
   * fails or misses the deadline throws, and the client is replaced by a fresh one.
   */
  call<T>(op: (client: memjs.Client) => Promise<T>): Promise<T> {
    // After close(), memjs would open a new socket that nothing closes.
    if (this.#closed) return Promise.reject(new Error('the memcached connection is closed'));
    const client = this.#client;
    return new Promise<T>((resolve, reject) => {
      const call: Pending = {
        by: performance.now() + this.#deadlineMs,
        fail: (error) => {
          if (!this.#pending.delete(call)) return;
          reject(this.#failedOn(client, error));
        },
      };
      this.#pending.add(call);
      this.#watch();
      let answer: Promise<T>;
      try {
        answer = op(client);
      } catch (error) {
        call.fail(error);
        return;
      }
      answer.then((value) => {
        if (this.#pending.delete(call)) resolve(value);
      }, call.fail);
    });
  }

  /**
   * What a failed call throws. A call that fails or misses the deadline replaces the client (see
   * call), unless memcached answered it with an error status (the connection is fine), or the
   * client was replaced already (StaleClientError).
   */
  #failedOn(client: memjs.Client, error: unknown): unknown {
    if (this.#client !== client) return new StaleClientError(error);
    if (isMemcachedAnswer(error)) return error;
    if (!this.#closed) {
      this.#client = this.#createClient();
      // Closed once the calls still in flight on it have had their own deadline: closing it now
      // would leave them unanswered (memjs drops a call whose socket it closes itself).
      setTimeout(() => client.close(), this.#deadlineMs).unref();
    }
    return error;
  }

  /** One timer for every call's deadline (a timer per call cost more than the call's own work): looks a few times per deadline while calls are out. */
  #watch(): void {
    if (this.#sweep !== undefined) return;
    this.#sweep = setInterval(() => {
      const now = performance.now();
      for (const call of this.#pending) {
        if (call.by <= now) call.fail(new Error(`memcached did not answer within ${this.#deadlineMs} ms`));
      }
      if (this.#pending.size === 0) {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
      }
    }, this.#deadlineMs / 4);
    this.#sweep.unref();
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
    // A late failure of a client already replaced says nothing about memcached now.
    if (error instanceof StaleClientError) return result;
    if (this.#up) {
      this.#up = false;
      this.#onAvailability?.(false, error instanceof Error ? error : new Error(String(error)));
    }
    return result;
  }
}

/** What corked() needs of memjs's server objects (not in its types). */
interface MemjsServer {
  sock(sasl: boolean, go: (socket: Socket) => void): void;
}

/**
 * memjs writes each request to its socket on its own: a system call per request. Corked, the
 * requests made in one tick (the claims of a receive of ten, the marks of the jobs that ended
 * together) leave in one write, at the end of the tick. Order and replies are unchanged.
 */
function corked(client: memjs.Client): memjs.Client {
  // memjs's internals, not its API: a release that changes them gets uncorked writes, not a failure.
  const servers = (client as unknown as { servers?: Partial<MemjsServer>[] }).servers;
  if (!Array.isArray(servers) || !servers.every((s): s is MemjsServer => typeof s.sock === 'function')) return client;
  for (const server of servers) {
    const sock = server.sock.bind(server);
    server.sock = (sasl, go) =>
      sock(sasl, (socket) => {
        if (socket.writableCorked === 0) {
          socket.cork();
          process.nextTick(() => socket.uncork());
        }
        go(socket);
      });
  }
  return client;
}
