import type { Socket } from 'node:net';
import { encode, INVALID_ARGUMENTS, isQuiet, MAX_KEY_BYTES, MemcachedStatusError, Op, Request } from './memcached-wire.js';
import { type MemcachedTlsOptions, notAReply, openSocket, serverName, socketError, stuckError } from './memcached-socket.js';

const ignore = () => {};

/** The requests of one write, in order, and when it left. */
interface Batch {
  readonly at: number;
  readonly requests: Request[];
  /** The first not answered yet. */
  next: number;
}

/**
 * Where a turn's requests are written: the check phase of the event loop's turn, after every I/O
 * callback of its poll phase. A receive's claims, a flush's done marks and the jobs that settled
 * meanwhile share one write, where a write per tick took about one per job (a loopback write costs
 * tens to hundreds of µs of CPU on a small host: bench/README.md). Taken when this module loads,
 * so a test's fake timers, installed later, never hold a write back.
 */
const atCheckPhase = setImmediate;

/** The requests made in one turn of the event loop, written together in its check phase. */
interface Turn {
  readonly requests: Request[];
  readonly chunks: Buffer[];
  quiet: boolean;
}

/**
 * One memcached server: one socket (TCP, or TLS with `tls`), opened on the first request and again after a failure. The
 * requests of one turn of the event loop leave in one write (ended by a NOOP when any is quiet),
 * at the turn's check phase (atCheckPhase); replies come in
 * order, so each is matched by walking the requests written before it. A connection found stuck
 * (#checkDeadline) is destroyed, and every request on it fails.
 */
export class MemcachedServer {
  #socket: Socket | undefined;
  /** Written and not all answered, oldest first. */
  #batches: Batch[] = [];
  #turn: Turn | undefined;
  #partial: Buffer | undefined;
  #opaque = 0;
  #watch: NodeJS.Timeout | undefined;
  /** When the deadline was last checked (performance.now()). */
  #checkedAt = 0;
  /** The last check was skipped as late. */
  #skipped = false;
  /** When bytes last came or went on the socket (performance.now()). */
  #movedAt = 0;
  #closed = false;
  /** How errors name it: `host:port`, or `tls://host:port`. */
  readonly #where: string;

  constructor(
    readonly host: string,
    readonly port: number,
    readonly timeoutMs: number,
    readonly tls?: MemcachedTlsOptions,
  ) {
    this.#where = serverName(host, port, tls);
  }

  send<T>(op: Op, key: string, extras: Buffer | undefined, value: string | undefined, cas?: bigint | 'read'): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the memcached client is closed'));
    return new Promise<T>((resolve, reject) => {
      // memcached answers a longer key with "invalid arguments" and closes the connection, failing
      // every other request on it: refused here with the answer it would give.
      if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new MemcachedStatusError(op, INVALID_ARGUMENTS);
      const opaque = this.#nextOpaque();
      // Encoded first: a request that cannot be (it throws, and rejects) leaves nothing queued.
      const chunk = encode(op, opaque, key, extras, value, typeof cas === 'bigint' ? cas : 0n);
      const turn = this.#turn ?? this.#startTurn();
      turn.requests.push(new Request(opaque, op, resolve as (value: never) => void, reject, cas === 'read'));
      turn.chunks.push(chunk);
      if (isQuiet(op)) turn.quiet = true;
    });
  }

  #nextOpaque(): number {
    this.#opaque = (this.#opaque + 1) >>> 0;
    return this.#opaque;
  }

  #startTurn(): Turn {
    const turn: Turn = { requests: [], chunks: [], quiet: false };
    this.#turn = turn;
    atCheckPhase(() => this.#flush());
    return turn;
  }

  #flush(): void {
    const turn = this.#turn!;
    this.#turn = undefined;
    if (turn.quiet) {
      const opaque = this.#nextOpaque();
      turn.requests.push(new Request(opaque, Op.Noop, ignore, ignore));
      turn.chunks.push(encode(Op.Noop, opaque, '', undefined, undefined));
    }
    const socket = this.#socket ?? this.#connect();
    this.#batches.push({ at: performance.now(), requests: turn.requests, next: 0 });
    socket.write(turn.chunks.length === 1 ? turn.chunks[0]! : Buffer.concat(turn.chunks));
    this.#movedAt = performance.now();
    if (this.#closed) socket.end(); // close() came in this turn: its requests still go
    if (this.#watch === undefined) {
      this.#checkedAt = performance.now();
      this.#watch = setInterval(() => this.#checkDeadline(), this.#checkEveryMs).unref();
    }
  }

  get #checkEveryMs(): number {
    return Math.max(10, this.timeoutMs / 4);
  }

  #connect(): Socket {
    const socket = openSocket(this.host, this.port, this.tls);
    this.#socket = socket;
    let replied = false;
    socket.on('data', (chunk: Buffer) => {
      replied = true;
      this.#read(socket, chunk);
    });
    socket.on('error', (error) => this.#fail(socket, socketError(this.#where, socket, error, replied)));
    socket.on('close', () => this.#fail(socket, new Error(`memcached ${this.#where} closed the connection`)));
    return socket;
  }

  #read(socket: Socket, chunk: Buffer): void {
    try {
      this.#movedAt = performance.now();
      this.#readReplies(socket, chunk);
    } catch (error) {
      socket.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #readReplies(socket: Socket, chunk: Buffer): void {
    const buf = this.#partial === undefined ? chunk : Buffer.concat([this.#partial, chunk]);
    this.#partial = undefined;
    let at = 0;
    while (buf.length - at >= 24) {
      const end = at + 24 + buf.readUInt32BE(at + 8);
      if (buf.length < end) break;
      if (buf[at] !== 0x81) return void socket.destroy(notAReply(this.#where, buf[at]));
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
   * Fail the connection when it is stuck: its oldest request waited `timeoutMs` while nothing came
   * or went on the socket, or `4 × timeoutMs` whatever the traffic (a busy connection that still
   * moves is given the time a loaded memcached, or a loaded host, takes). Not on a check that comes
   * late: the event loop was held up (a busy or paused process), and replies that came meanwhile
   * may wait unread; the next check, after they are read, decides.
   */
  #checkDeadline(): void {
    const now = performance.now();
    // One late check is skipped, never two in a row: between two interval callbacks Node reads the
    // sockets, so the next check sees every reply that came (a loop always this busy still fails).
    const late = now - this.#checkedAt > 2 * this.#checkEveryMs && !this.#skipped;
    this.#skipped = late;
    this.#checkedAt = now;
    const oldest = this.#batches[0];
    if (oldest === undefined) {
      clearInterval(this.#watch);
      this.#watch = undefined;
      return;
    }
    const waited = now - oldest.at;
    const idle = now - this.#movedAt > this.timeoutMs;
    if (!late && ((idle && waited > this.timeoutMs) || waited > 4 * this.timeoutMs)) {
      this.#socket?.destroy(stuckError(this.#where, this.#socket, Math.round(waited), this.timeoutMs));
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
    if (this.#turn === undefined) this.#socket?.end();
  }
}
