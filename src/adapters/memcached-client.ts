import { connect, type Socket } from 'node:net';
import { encode, expiryExtras, incrementExtras, isQuiet, Op, parseServers, Request, storeExtras } from './memcached-wire.js';

const ignore = () => {};

/** The requests of one write, in order, and when it left. */
interface Batch {
  readonly at: number;
  readonly requests: Request[];
  /** The first not answered yet. */
  next: number;
}

/** The requests made in one tick, written together at its end. */
interface Tick {
  readonly requests: Request[];
  readonly chunks: Buffer[];
  quiet: boolean;
}

/**
 * One memcached server: one socket, opened on the first request and again after a failure. The
 * requests of one tick leave in one write (ended by a NOOP when any is quiet); replies come in
 * order, so each is matched by walking the requests written before it. A request unanswered after
 * `timeoutMs` means the connection is stuck: it is destroyed, and every request on it fails.
 */
class Server {
  #socket: Socket | undefined;
  /** Written and not all answered, oldest first. */
  #batches: Batch[] = [];
  #tick: Tick | undefined;
  #partial: Buffer | undefined;
  #opaque = 0;
  #watch: NodeJS.Timeout | undefined;
  /** When the deadline was last checked (performance.now()). */
  #checkedAt = 0;
  #closed = false;

  constructor(
    readonly host: string,
    readonly port: number,
    readonly timeoutMs: number,
  ) {}

  send<T>(op: Op, key: string, extras: Buffer | undefined, value: string | undefined, cas?: bigint | 'read'): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the memcached client is closed'));
    return new Promise<T>((resolve, reject) => {
      const opaque = this.#nextOpaque();
      // Encoded first: a request that cannot be (it throws, and rejects) leaves nothing queued.
      const chunk = encode(op, opaque, key, extras, value, typeof cas === 'bigint' ? cas : 0n);
      const tick = this.#tick ?? this.#startTick();
      tick.requests.push(new Request(opaque, op, resolve as (value: never) => void, reject, cas === 'read'));
      tick.chunks.push(chunk);
      if (isQuiet(op)) tick.quiet = true;
    });
  }

  #nextOpaque(): number {
    this.#opaque = (this.#opaque + 1) >>> 0;
    return this.#opaque;
  }

  #startTick(): Tick {
    const tick: Tick = { requests: [], chunks: [], quiet: false };
    this.#tick = tick;
    process.nextTick(() => this.#flush());
    return tick;
  }

  #flush(): void {
    const tick = this.#tick!;
    this.#tick = undefined;
    if (tick.quiet) {
      const opaque = this.#nextOpaque();
      tick.requests.push(new Request(opaque, Op.Noop, ignore, ignore));
      tick.chunks.push(encode(Op.Noop, opaque, '', undefined, undefined));
    }
    const socket = this.#socket ?? this.#connect();
    this.#batches.push({ at: performance.now(), requests: tick.requests, next: 0 });
    socket.write(tick.chunks.length === 1 ? tick.chunks[0]! : Buffer.concat(tick.chunks));
    if (this.#closed) socket.end(); // close() came in this tick: its requests still go
    if (this.#watch === undefined) {
      this.#checkedAt = performance.now();
      this.#watch = setInterval(() => this.#checkDeadline(), this.#checkEveryMs).unref();
    }
  }

  get #checkEveryMs(): number {
    return Math.max(10, this.timeoutMs / 4);
  }

  #connect(): Socket {
    const socket = connect({ host: this.host, port: this.port, noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000 });
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(socket, chunk));
    socket.on('error', (error) => this.#fail(socket, error));
    socket.on('close', () => this.#fail(socket, new Error(`memcached ${this.host}:${this.port} closed the connection`)));
    return socket;
  }

  #read(socket: Socket, chunk: Buffer): void {
    const buf = this.#partial === undefined ? chunk : Buffer.concat([this.#partial, chunk]);
    this.#partial = undefined;
    let at = 0;
    while (buf.length - at >= 24) {
      const end = at + 24 + buf.readUInt32BE(at + 8);
      if (buf.length < end) break;
      if (buf[at] !== 0x81) return void socket.destroy(new Error('memcached sent something that is not a binary-protocol reply'));
      const from = at + 24 + buf[at + 4]! + buf.readUInt16BE(at + 2);
      if (!this.#answer(buf.readUInt32BE(at + 12), buf.readUInt16BE(at + 6), buf, at, from, end)) {
        return void socket.destroy(new Error('memcached answered a request out of order'));
      }
      at = end;
    }
    // A reply cut between reads: kept (copied, not the whole read) until the rest comes.
    if (at < buf.length) this.#partial = Buffer.from(buf.subarray(at));
  }

  /**
   * Match a reply with its request; the quiet ones written before it were passed over. False, and
   * nothing settled, when it answers no request due (then the connection is out of step).
   */
  #answer(opaque: number, status: number, body: Buffer, at: number, from: number, to: number): boolean {
    const batches = this.#batches;
    // Find it first: a quiet request is taken as done only once a later reply proves it was passed over.
    let b = 0;
    let i = batches[0]?.next ?? 0;
    for (;;) {
      const batch = batches[b];
      if (batch === undefined) return false;
      if (i === batch.requests.length) {
        b++;
        i = batches[b]?.next ?? 0;
        continue;
      }
      const r = batch.requests[i]!;
      if (r.opaque === opaque) break;
      if (!isQuiet(r.op)) return false;
      i++;
    }
    for (let batch = batches[0]!; ; batch = batches[0]!) {
      const r = batch.requests[batch.next++]!;
      if (batch.next === batch.requests.length) batches.shift();
      if (r.opaque === opaque) {
        r.answer(status, body, at, from, to);
        return true;
      }
      r.passed();
    }
  }

  /**
   * Fail the connection when its oldest request is past the deadline. Not on a check that comes
   * late: the event loop was held up (a busy or paused process), and replies that came meanwhile
   * wait unread; the next check, after they are read, decides.
   */
  #checkDeadline(): void {
    const now = performance.now();
    const late = now - this.#checkedAt > 2 * this.#checkEveryMs;
    this.#checkedAt = now;
    const oldest = this.#batches[0];
    if (oldest === undefined) {
      clearInterval(this.#watch);
      this.#watch = undefined;
    } else if (!late && now - oldest.at > this.timeoutMs) {
      this.#socket?.destroy(new Error(`memcached ${this.host}:${this.port} did not answer within ${this.timeoutMs} ms`));
    }
  }

  /** The socket failed or closed: every request written to it fails; the next request opens a new one. */
  #fail(socket: Socket, error: Error): void {
    if (this.#socket !== socket) return;
    this.#socket = undefined;
    socket.destroy();
    const batches = this.#batches;
    this.#batches = [];
    this.#partial = undefined;
    for (const b of batches) for (let i = b.next; i < b.requests.length; i++) b.requests[i]!.reject(error);
  }

  /** Ends the connection once the requests written are answered; later requests are refused. */
  close(): void {
    this.#closed = true;
    if (this.#tick === undefined) this.#socket?.end();
  }
}

/**
 * A memcached client: `host:port[,host:port]` (port 11211 when left out), a key's server chosen as
 * memjs chooses it (its string hash modulo the server count), so workers on an older sqs-jobs find
 * the same locks. Values are UTF-8 strings; expiries in seconds (0: none). A request fails on a
 * connection error or after `timeoutMs` without a reply; memcached's error answers reject with a
 * MemcachedStatusError; misses and refusals answer null or false.
 */
export class MemcachedClient {
  readonly #servers: Server[];

  constructor(servers: string, timeoutMs: number) {
    this.#servers = parseServers(servers).map(({ host, port }) => new Server(host, port, timeoutMs));
  }

  #server(key: string): Server {
    const servers = this.#servers;
    if (servers.length === 1) return servers[0]!;
    let hash = 0;
    for (let i = 0; i < key.length; i++) hash = (31 * hash + key.charCodeAt(i)) << 0;
    return servers[Math.abs(hash) % servers.length]!;
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
  /** Deletes the key only as it was when read (its `cas` from getWithCas()): false when it changed or is gone. */
  deleteIf(key: string, cas: bigint): Promise<boolean> {
    return this.#server(key).send(Op.DeleteQ, key, undefined, undefined, cas);
  }
  /** Adds `amount`; a missing key is created holding `initial`. The counter's value after. */
  increment(key: string, amount: number, initial: number, expires: number): Promise<number> {
    return this.#server(key).send(Op.Increment, key, incrementExtras(amount, initial, expires), undefined);
  }
  /** Appends to an existing key's value: false when the key does not exist. */
  append(key: string, value: string): Promise<boolean> {
    return this.#server(key).send(Op.AppendQ, key, undefined, value);
  }

  close(): void {
    for (const s of this.#servers) s.close();
  }
}
