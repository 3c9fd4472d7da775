import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../../src/adapters/memcached-lock.js';
import { notAReply, serverName, socketError, stuckError } from '../../../src/adapters/memcached-socket.js';
import { parseServers } from '../../../src/adapters/memcached-wire.js';
import { ConfigError } from '../../../src/core/errors.js';

/** A socket as a failed TLS connection leaves it: a TLSSocket, TCP connected, no handshake done. */
const tlsSocket = (connecting = false) => Object.assign(Object.create(TLSSocket.prototype) as TLSSocket, { connecting });
const failure = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('parseServers', () => {
  it('puts every server of a tls:// list on TLS, and none of a plain one', () => {
    expect(parseServers('tls://a.internal:11211,10.0.0.2:11212')).toEqual({
      tls: true,
      servers: [
        { host: 'a.internal', port: 11211 },
        { host: '10.0.0.2', port: 11212 },
      ],
    });
    expect(parseServers('127.0.0.1:11211,127.0.0.1')).toEqual({
      tls: false,
      servers: [
        { host: '127.0.0.1', port: 11211 },
        { host: '127.0.0.1', port: 11211 },
      ],
    });
  });

  it('refuses tls:// after the first server, and any other scheme, naming the server', () => {
    expect(() => parseServers('a:1,tls://b:2')).toThrow(/"tls:\/\/b:2": tls:\/\/ comes once, before the first server/);
    expect(() => parseServers('memcached://a:1')).toThrow(/"memcached:\/\/a:1"/);
  });
});

describe('MemcachedLock tls option', () => {
  it('is checked where it enters: a plain list, an IP address as server name, an unknown field', () => {
    const lock = (o: object) => new MemcachedLock({ servers: 'tls://127.0.0.1:1', ...o }).close();
    expect(() => new MemcachedLock({ servers: '127.0.0.1:1', tls: { servername: 'memcached.internal' } })).toThrow(
      /options.tls: needs a tls:\/\/ server list \(got "127.0.0.1:1"\)/,
    );
    expect(() => lock({ tls: { servername: '10.0.0.1' } })).toThrow(ConfigError);
    expect(() => lock({ tls: { servername: '10.0.0.1' } })).toThrow(/options.tls.servername: must be a DNS name, not an IP address/);
    expect(() => lock({ tls: { verify: false } })).toThrow(/options.tls: Unrecognized key/);
    expect(() => lock({ tls: { ca: Buffer.from('pem'), servername: 'memcached.internal' } })).not.toThrow();
    expect(() => lock({})).not.toThrow(); // tls:// alone: Node's CAs, the host's name
  });
});

describe('socketError: what a failed connection says', () => {
  const where = serverName('127.0.0.1', 11311, {});

  it('names the setting to fix when the certificate is not trusted or names another host', () => {
    const untrusted = socketError(
      where,
      tlsSocket(),
      failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate; if…'),
      false,
    );
    expect(untrusted.message).toBe(
      "memcached tls://127.0.0.1:11311: certificate not trusted (set SQS_JOBS_MEMCACHED_CA, or MemcachedLock's tls.ca, to the CA that signed it)",
    );
    expect(untrusted.cause).toBeInstanceOf(Error);
    for (const code of ['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY']) {
      expect(socketError(where, tlsSocket(), failure(code, 'x'), false).message).toMatch(
        /certificate not trusted \(set SQS_JOBS_MEMCACHED_CA/,
      );
    }
    const name = socketError(where, tlsSocket(), failure('ERR_TLS_CERT_ALTNAME_INVALID', "Host: a. is not in the cert's altnames"), false);
    expect(name.message).toMatch(
      /^memcached tls:\/\/127.0.0.1:11311: host name does not match the certificate \(set SQS_JOBS_MEMCACHED_SERVERNAME/,
    );
    expect(socketError(where, tlsSocket(), failure('CERT_HAS_EXPIRED', 'certificate has expired'), false).message).toMatch(
      /the certificate has expired/,
    );
  });

  it('says a handshake that failed on the protocol may be a plain-TCP memcached', () => {
    const eproto = failure('EPROTO', 'write EPROTO 00:error:0A00010B:SSL routines:tls_validate_record_header:wrong version number:x.c:78:');
    expect(socketError(where, tlsSocket(), eproto, false).message).toBe(
      'memcached tls://127.0.0.1:11311: TLS handshake failed (wrong version number): is it a plain-TCP memcached? then drop tls://',
    );
    const reset = failure('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established');
    expect(socketError(where, tlsSocket(), reset, false).message).toMatch(/TLS handshake failed .*plain-TCP/);
    // Not connected yet: a refused or reset TCP connection is only that.
    const refused = failure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:11311');
    expect(socketError(where, tlsSocket(true), refused, false)).toBe(refused);
  });

  it('leaves plain errors alone, but for a reset before any reply (perhaps a TLS-only memcached)', () => {
    const plain = new Socket();
    const refused = failure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:11311');
    expect(socketError('127.0.0.1:11311', plain, refused, false)).toBe(refused);
    expect(socketError('127.0.0.1:11311', plain, failure('ECONNRESET', 'read ECONNRESET'), false).message).toBe(
      'memcached 127.0.0.1:11311: reset the connection before any reply (if it speaks only TLS, write tls://127.0.0.1:11311)',
    );
    const midway = failure('ECONNRESET', 'read ECONNRESET');
    expect(socketError('127.0.0.1:11311', plain, midway, true)).toBe(midway);
    plain.destroy();
  });

  it('tells a stuck TLS handshake from a server that does not answer, and a TLS record from a reply', () => {
    expect(stuckError(where, tlsSocket(), 512, 500).message).toBe(
      'memcached tls://127.0.0.1:11311: no TLS handshake in 512 ms (timeout 500 ms): is it a plain-TCP memcached? then drop tls://',
    );
    expect(stuckError(where, tlsSocket(true), 512, 500).message).toBe(
      'memcached tls://127.0.0.1:11311 did not answer in 512 ms (timeout 500 ms)',
    );
    expect(stuckError('127.0.0.1:1', undefined, 512, 500).message).toBe('memcached 127.0.0.1:1 did not answer in 512 ms (timeout 500 ms)');
    expect(notAReply('127.0.0.1:11311', 0x15).message).toBe(
      'memcached 127.0.0.1:11311 answered in TLS: write the server list as tls://127.0.0.1:11311',
    );
    expect(notAReply('127.0.0.1:11311', 0x45).message).toBe('memcached sent something that is not a binary-protocol reply');
  });
});
