import { connect, type Socket } from 'node:net';
import { connect as connectTls, TLSSocket } from 'node:tls';

/**
 * How a `tls://` server is verified: the PEM of the CA that signed its certificate (default:
 * Node's own CAs) and the name the certificate must hold (default: the host connected to).
 * Verification is never off.
 */
export interface MemcachedTlsOptions {
  readonly ca?: string | Buffer;
  readonly servername?: string;
}

/** The same on both kinds of socket: replies leave at once, and a dead peer is noticed. */
const SOCKET_OPTIONS = { noDelay: true, keepAlive: true, keepAliveInitialDelay: 30_000 } as const;

/** TLS sockets whose handshake is done. */
const secured = new WeakSet<Socket>();

/** A socket to one memcached server: plain TCP, or TLS (verified) when `tls` is given. */
export function openSocket(host: string, port: number, tls: MemcachedTlsOptions | undefined): Socket {
  if (tls === undefined) return connect({ host, port, ...SOCKET_OPTIONS });
  const socket = connectTls({ host, port, ...SOCKET_OPTIONS, ...tls });
  // Older Nodes (20 here) leave the socket options out of tls.connect: set them on the socket too.
  socket.setNoDelay(SOCKET_OPTIONS.noDelay).setKeepAlive(SOCKET_OPTIONS.keepAlive, SOCKET_OPTIONS.keepAliveInitialDelay);
  socket.once('secureConnect', () => secured.add(socket));
  return socket;
}

/** How a server is named in errors: `tls://host:port` or `host:port`. */
export function serverName(host: string, port: number, tls: MemcachedTlsOptions | undefined): string {
  return `${tls === undefined ? '' : 'tls://'}${host}:${port}`;
}

const NOT_TRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);
const OUT_OF_DATE: Readonly<Record<string, string>> = { CERT_HAS_EXPIRED: 'has expired', CERT_NOT_YET_VALID: 'is not valid yet' };
const PLAIN_HINT = 'is it a plain-TCP memcached? then drop tls://';

/**
 * A socket's error as the availability report shows it: a failed TLS handshake says which setting
 * to look at (the CA, the server name, or a plain-TCP server behind `tls://`); a plain connection
 * reset before any reply may be a TLS-only memcached. Anything else is left as it is.
 */
export function socketError(where: string, socket: Socket, error: Error, replied: boolean): Error {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  // What Node said stays in `cause` (pino's error serialiser prints it after the message).
  const explained = (what: string) => new Error(`memcached ${where}: ${what}`, { cause: error });
  if (!(socket instanceof TLSSocket)) {
    if (code === 'ECONNRESET' && !replied) {
      return explained(`reset the connection before any reply (if it speaks only TLS, write tls://${where})`);
    }
    return error;
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return explained(
      "host name does not match the certificate (set SQS_JOBS_MEMCACHED_SERVERNAME, or MemcachedLock's tls.servername, to a name it holds)",
    );
  }
  if (NOT_TRUSTED.has(code)) {
    return explained("certificate not trusted (set SQS_JOBS_MEMCACHED_CA, or MemcachedLock's tls.ca, to the CA that signed it)");
  }
  if (OUT_OF_DATE[code] !== undefined) return explained(`the certificate ${OUT_OF_DATE[code]}`);
  if (!secured.has(socket) && !socket.connecting && (code === 'EPROTO' || code.startsWith('ERR_SSL_') || code === 'ECONNRESET')) {
    const reason = /SSL routines:[^:]*:([^:]+)/.exec(error.message)?.[1] ?? error.message;
    return explained(`TLS handshake failed (${reason}): ${PLAIN_HINT}`);
  }
  return error;
}

/** Why a stuck connection is given up: a TLS socket connected without its handshake done is likely a plain-TCP memcached. */
export function stuckError(where: string, socket: Socket | undefined, waitedMs: number, timeoutMs: number): Error {
  if (socket instanceof TLSSocket && !socket.connecting && !secured.has(socket)) {
    return new Error(`memcached ${where}: no TLS handshake in ${waitedMs} ms (timeout ${timeoutMs} ms): ${PLAIN_HINT}`);
  }
  return new Error(`memcached ${where} did not answer in ${waitedMs} ms (timeout ${timeoutMs} ms)`);
}

/** A reply that does not start as a binary-protocol reply; a TLS record (alert 0x15, handshake 0x16) says the server speaks TLS. */
export function notAReply(where: string, firstByte: number | undefined): Error {
  if (firstByte === 0x15 || firstByte === 0x16) {
    return new Error(`memcached ${where} answered in TLS: write the server list as tls://${where}`);
  }
  return new Error('memcached sent something that is not a binary-protocol reply');
}
