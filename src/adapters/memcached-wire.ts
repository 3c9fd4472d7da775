import { KeyValueAnswer } from '../ports/key-values.js';
/**
 * memcached's binary protocol, the few commands sqs-jobs needs. Quiet variants where there is one:
 * memcached answers them only when there is something to say (an `add` that found the key, a
 * `get` that found a value), and the NOOP that ends each tick's requests says the rest succeeded.
 */
export const Op = {
  Get: 0x00,
  Set: 0x01,
  Add: 0x02,
  Delete: 0x04,
  Increment: 0x05,
  GetQ: 0x09,
  Noop: 0x0a,
  Append: 0x0e,
  SetQ: 0x11,
  AddQ: 0x12,
  DeleteQ: 0x14,
  AppendQ: 0x19,
  Touch: 0x1c,
} as const;
export type Op = (typeof Op)[keyof typeof Op];

const OK = 0x00;
const NOT_FOUND = 0x01;
const EXISTS = 0x02;
export const NOT_STORED = 0x05;
export const INVALID_ARGUMENTS = 0x04;
/** memcached's longest key. */
export const MAX_KEY_BYTES = 250;
const STATUS_TEXT: Readonly<Record<number, string>> = {
  3: 'value too large',
  4: 'invalid arguments',
  5: 'not stored',
  6: 'non-numeric value',
  129: 'unknown command',
  130: 'out of memory',
  133: 'busy',
  134: 'temporary failure',
};
const OP_NAME: Readonly<Record<number, string>> = { 0: 'get', 1: 'set', 2: 'add', 4: 'delete', 5: 'incr', 14: 'append', 28: 'touch' };
/** A quiet opcode's loud twin, for messages. */
const LOUD: Readonly<Record<number, number>> = { 9: 0x00, 17: 0x01, 18: 0x02, 20: 0x04, 25: 0x0e };

/** memcached answered a request with an error status: the connection works, memcached is up. */
export class MemcachedStatusError extends KeyValueAnswer {
  constructor(
    op: Op,
    readonly status: number,
  ) {
    const name = OP_NAME[LOUD[op] ?? op] ?? `0x${op.toString(16)}`;
    super(`memcached answered ${name} with status 0x${status.toString(16)} (${STATUS_TEXT[status] ?? 'error'})`);
    this.name = 'MemcachedStatusError';
  }
}

/** One request written and not yet answered. */
export class Request {
  constructor(
    readonly opaque: number,
    readonly op: Op,
    readonly resolve: (value: never) => void,
    readonly reject: (error: Error) => void,
    /** A get answers `{ value, cas }` (the item's version), not the value alone. */
    readonly withCas = false,
  ) {}

  /** memcached answered it: `status`, the header at `body[at]`, the value in `body[from, to)`. */
  answer(status: number, body: Buffer, at: number, from: number, to: number): void {
    try {
      this.#answer(status, body, at, from, to);
    } catch (error) {
      // A reply too short for what it answers (not memcached's): this request fails, never hangs.
      this.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  #answer(status: number, body: Buffer, at: number, from: number, to: number): void {
    const op = this.op;
    const resolve = this.resolve as (value: unknown) => void;
    if (op === Op.Increment && status === OK && to - from !== 8) throw new Error(`memcached answered incr with ${to - from} bytes, not 8`);
    if (status === OK) {
      if (this.withCas) resolve({ value: body.toString('utf8', from, to), cas: body.readBigUInt64BE(at + 16) });
      else if (op === Op.Get || op === Op.GetQ) resolve(body.toString('utf8', from, to));
      else if (op === Op.Increment) resolve(body.readUInt32BE(from) * 2 ** 32 + body.readUInt32BE(from + 4));
      else resolve(op === Op.Set || op === Op.SetQ ? undefined : true);
    } else if (status === NOT_FOUND && (op === Op.Get || op === Op.GetQ)) resolve(null);
    else if (status === NOT_FOUND && (op === Op.Delete || op === Op.DeleteQ || op === Op.Touch)) resolve(false);
    // add: the key exists; set or delete with a CAS: the item changed since it was read, or is gone.
    else if (status === EXISTS && (op === Op.Add || op === Op.AddQ || op === Op.Delete || op === Op.DeleteQ)) resolve(false);
    else if ((status === EXISTS || status === NOT_FOUND) && (op === Op.Set || op === Op.SetQ)) resolve(false);
    else if (status === NOT_STORED && (op === Op.Add || op === Op.AddQ || op === Op.Append || op === Op.AppendQ)) resolve(false);
    // incr of a missing key: another connection created it between this one's miss and its add.
    else if (status === NOT_STORED && op === Op.Increment) resolve(null);
    else this.reject(new MemcachedStatusError(op, status));
  }

  /** A quiet request memcached passed over: it did what was asked (a `get` found nothing). */
  passed(): void {
    const resolve = this.resolve as (value: unknown) => void;
    resolve(this.op === Op.GetQ ? null : this.op === Op.SetQ ? undefined : true);
  }
}

export const isQuiet = (op: Op) => op === Op.GetQ || op === Op.SetQ || op === Op.AddQ || op === Op.DeleteQ || op === Op.AppendQ;

/** A request: the 24-byte header (with the item version `cas` it applies to, 0 for any), then extras, key and value. */
export function encode(op: Op, opaque: number, key: string, extras: Buffer | undefined, value: string | undefined, cas = 0n): Buffer {
  const keyBytes = Buffer.byteLength(key);
  const extraBytes = extras?.length ?? 0;
  const valueBytes = value === undefined ? 0 : Buffer.byteLength(value);
  const buf = Buffer.allocUnsafe(24 + extraBytes + keyBytes + valueBytes);
  buf.writeUInt32BE((0x80000000 | (op << 16) | keyBytes) >>> 0, 0); // magic, opcode, key length
  buf.writeUInt32BE(extraBytes << 24, 4); // extras length, data type, vbucket
  buf.writeUInt32BE(extraBytes + keyBytes + valueBytes, 8);
  buf.writeUInt32BE(opaque, 12);
  buf.writeBigUInt64BE(cas, 16); // 0: any version
  extras?.copy(buf, 24);
  buf.write(key, 24 + extraBytes);
  if (value !== undefined) buf.write(value, 24 + extraBytes + keyBytes);
  return buf;
}

/** Extras of a store: flags 0, then the expiry. */
export function storeExtras(expires: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(expires, 4);
  return b;
}

export function expiryExtras(expires: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(expires, 0);
  return b;
}

export function incrementExtras(amount: number, initial: number, expires: number): Buffer {
  const b = Buffer.allocUnsafe(20);
  b.writeUInt32BE(Math.floor(amount / 2 ** 32), 0);
  b.writeUInt32BE(amount >>> 0, 4);
  b.writeUInt32BE(Math.floor(initial / 2 ** 32), 8);
  b.writeUInt32BE(initial >>> 0, 12);
  b.writeUInt32BE(expires, 16);
  return b;
}

/**
 * `[tls://]host:port[,host:port]` (port 11211 when left out; `tls://` written once, before the first
 * server, puts every server of the list on TLS), or an error naming the server.
 */
export function parseServers(servers: string): {
  readonly tls: boolean;
  readonly servers: { readonly host: string; readonly port: number }[];
} {
  const tls = servers.trimStart().startsWith('tls://');
  const list = tls ? servers.trimStart().slice('tls://'.length) : servers;
  return {
    tls,
    servers: list.split(',').map((s) => {
      const text = s.trim();
      if (text.includes('://'))
        throw new Error(`memcached server "${text}": tls:// comes once, before the first server, and no other scheme`);
      if (text.includes('@')) throw new Error(`memcached server "${text}": user:password@ (SASL) is not supported`);
      const colon = text.lastIndexOf(':');
      const port = colon === -1 ? 11211 : Number(text.slice(colon + 1));
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`memcached server "${text}": the port must be 1-65535`);
      return { host: colon === -1 ? text : text.slice(0, colon), port };
    }),
  };
}
