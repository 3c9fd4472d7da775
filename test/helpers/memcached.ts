import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tcpAnswers } from './net.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A memcached of the test's own on a loopback port, which the test may kill and restart. */
export class PrivateMemcached {
  #child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    readonly args: readonly string[],
  ) {}

  /** `args`: more of memcached's options (e.g. `-C`: no item versions, as ElastiCache's cas_disabled). */
  static async start(args: readonly string[] = []): Promise<PrivateMemcached> {
    const m = new PrivateMemcached(await freePort(), args);
    await m.restart();
    return m;
  }

  get servers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The running memcached's process id (a bench reads its CPU), undefined when stopped. */
  get pid(): number | undefined {
    return this.#child?.exitCode === null ? this.#child.pid : undefined;
  }

  async restart(): Promise<void> {
    const user = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    this.#child = spawn('memcached', ['-l', '127.0.0.1', '-p', String(this.port), '-U', '0', '-m', '16', ...this.args, ...user], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 100 && !(await tcpAnswers('127.0.0.1', this.port)); i++) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child === undefined || child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

/** A loopback TCP proxy: `onClient` wires each client connection; close() destroys every socket. */
async function loopbackProxy(
  onClient: (client: Socket, track: (s: Socket) => void) => void,
): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => void sockets.add(s);
  const server: Server = createServer((client) => {
    track(client);
    onClient(client, track);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Connect `client` to memcached at `targetPort`; either side closing closes both. */
function pipeTo(client: Socket, targetPort: number, track: (s: Socket) => void): Socket {
  const upstream = connect({ host: '127.0.0.1', port: targetPort });
  track(upstream);
  client.pipe(upstream);
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
  return upstream;
}

/** A loopback proxy to memcached that delays the first `slowReplies` reply chunks by `delayMs`. */
export function slowProxy(targetPort: number, delayMs: number, slowReplies = 1): Promise<{ port: number; close: () => Promise<void> }> {
  let slowLeft = slowReplies;
  return loopbackProxy((client, track) => {
    pipeTo(client, targetPort, track).on('data', (chunk) => {
      if (slowLeft-- > 0) setTimeout(() => client.writable && client.write(chunk), delayMs);
      else client.write(chunk);
    });
  });
}

/**
 * A loopback proxy to memcached that closes each of its first `drops` connections as soon as a
 * request arrives (no reply, no error: as a server restarting, or a middlebox timing out, would),
 * then passes the rest through.
 */
export function droppingProxy(targetPort: number, drops = 1): Promise<{ port: number; close: () => Promise<void> }> {
  let left = drops;
  return loopbackProxy((client, track) => {
    if (left-- > 0) client.once('data', () => client.end());
    else pipeTo(client, targetPort, track).pipe(client);
  });
}

/** A loopback proxy to memcached that passes its replies on a few bytes at a time (a reply cut across reads). */
export function choppingProxy(targetPort: number, pieceBytes = 5): Promise<{ port: number; close: () => Promise<void> }> {
  return loopbackProxy((client, track) => {
    pipeTo(client, targetPort, track).on('data', (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += pieceBytes) client.write(chunk.subarray(at, at + pieceBytes));
    });
  });
}

/**
 * A loopback proxy to memcached that counts the NOOP requests its clients send (`noops`): the
 * client ends each write that holds a quiet request with one, so it counts those writes.
 */
export async function noopCountingProxy(targetPort: number): Promise<{ port: number; noops: () => number; close: () => Promise<void> }> {
  let noops = 0;
  const proxy = await loopbackProxy((client, track) => {
    const upstream = pipeTo(client, targetPort, track);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Binary protocol requests: a 24-byte header (opcode at byte 1, body length at 8), then the body.
      while (pending.length >= 24 && pending.length >= 24 + pending.readUInt32BE(8)) {
        if (pending[1] === 0x0a) noops++;
        pending = pending.subarray(24 + pending.readUInt32BE(8));
      }
    });
    upstream.pipe(client);
  });
  return { ...proxy, noops: () => noops };
}
