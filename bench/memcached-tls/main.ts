/**
 * `npm run bench:memcached-tls [-- --claims N --rounds R]`: the CPU a claim and its release cost
 * through MemcachedLock (the built package) with TLS beside without, in one run: two memcacheds of
 * its own on 127.0.0.1, one with TLS (memcached -Z, a CA and a certificate made for the run), one
 * plain; rounds alternate between them. Three shapes:
 *   one at a time   claim, then release, each awaited: every request its own write and TLS record
 *   10 at once      ten claims, then their ten releases: a receive's worth sharing writes
 *   new connection  a fresh MemcachedLock's first claim and its close: the connect (and handshake)
 * This process's CPU (process.cpuUsage) per claim + release, the median of the rounds, and
 * memcached's own (from /proc, over all rounds: its clock ticks in 10 ms).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { PrivateMemcached } from '../../test/helpers/memcached.js';
import { makeTestCertificates } from '../../test/helpers/tls-certs.js';
import { serverCpuSince } from '../lib/server-cpu.js';

// The built package (what users run), its types from src/.
const { MemcachedLock } = (await import('../../dist/src/adapters/index.js' as string)) as typeof import('../../src/adapters/index.js');
type Lock = InstanceType<typeof MemcachedLock>;

const { values } = parseArgs({ options: { claims: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '7' } } });
const CLAIMS = Number(values.claims);
const ROUNDS = Number(values.rounds);
const FRESH = Math.max(20, Math.round(CLAIMS / 40)); // new connections per round: each costs far more than a claim

type Variant = 'plain' | 'tls';
type Shape = 'one at a time' | '10 at once' | 'new connection';
const SHAPES: readonly Shape[] = ['one at a time', '10 at once', 'new connection'];

const certs = makeTestCertificates();
const servers = { plain: await PrivateMemcached.start(), tls: await PrivateMemcached.start(certs.memcachedArgs) };
const ca = readFileSync(certs.ca);
const lockOn = (variant: Variant): Lock =>
  variant === 'tls'
    ? new MemcachedLock({ servers: `tls://${servers.tls.servers}`, tls: { ca, servername: certs.name }, keyPrefix: 'bench-tls:' })
    : new MemcachedLock({ servers: servers.plain.servers, keyPrefix: 'bench-tls:' });

/** Claim and release `count` job ids on `lock`, `batch` at a time; refuses to count a claim that did not take. */
async function claimAndRelease(lock: Lock, count: number, batch: number): Promise<void> {
  for (let done = 0; done < count; done += batch) {
    const ids = Array.from({ length: Math.min(batch, count - done) }, () => randomUUID());
    const claims = await Promise.all(ids.map((id) => lock.claim(id, 't', 60)));
    if (claims.some((c) => c !== 'claimed')) throw new Error(`a claim answered ${claims.find((c) => c !== 'claimed')}`);
    await Promise.all(ids.map((id) => lock.release(id, 't')));
  }
}

/** `count` fresh locks, each connecting, claiming and releasing one id, then closing. */
async function freshConnections(variant: Variant, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const lock = lockOn(variant);
    await claimAndRelease(lock, 1, 1);
    lock.close();
  }
}

const kept = { plain: lockOn('plain'), tls: lockOn('tls') };
/** One round of `shape` (`scale` of its size): how many claims it made. */
async function round(variant: Variant, shape: Shape, scale = 1): Promise<number> {
  if (shape === 'new connection') {
    const n = Math.max(1, Math.round(FRESH * scale));
    await freshConnections(variant, n);
    return n;
  }
  const n = Math.max(10, Math.round(CLAIMS * scale));
  await claimAndRelease(kept[variant], n, shape === 'one at a time' ? 1 : 10);
  return n;
}

const cpuMicros = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return d.user + d.system;
};
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const perClaim: Record<Shape, Record<Variant, number[]>> = Object.fromEntries(SHAPES.map((s) => [s, { plain: [], tls: [] }])) as never;
const server: Record<Shape, Record<Variant, { micros: number; claims: number }>> = Object.fromEntries(
  SHAPES.map((s) => [s, { plain: { micros: 0, claims: 0 }, tls: { micros: 0, claims: 0 } }]),
) as never;

try {
  // Warm-up: connections made, the JIT settled, on both.
  for (const variant of ['plain', 'tls'] as const) for (const shape of SHAPES) await round(variant, shape, 0.25);
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a drift of the machine falls on both.
    const order: Variant[] = r % 2 === 0 ? ['plain', 'tls'] : ['tls', 'plain'];
    for (const shape of SHAPES) {
      for (const variant of order) {
        const pid = servers[variant].pid!;
        const serverSince = serverCpuSince([{ name: variant, pid }]);
        const since = process.cpuUsage();
        const claims = await round(variant, shape);
        perClaim[shape][variant].push(cpuMicros(since) / claims);
        server[shape][variant].micros += serverSince()[variant] ?? 0;
        server[shape][variant].claims += claims;
      }
    }
  }
} finally {
  kept.plain.close();
  kept.tls.close();
  await servers.plain.stop();
  await servers.tls.stop();
  certs.remove();
}

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const lines = [
  `memcached claim + release through MemcachedLock (built package), TLS beside plain TCP, Node ${process.versions.node}, ${cpus().length} CPUs (${cpus()[0]?.model.trim()})`,
  `${CLAIMS} claims per round (${FRESH} new connections), ${ROUNDS} rounds each after a warm-up, alternating; CPU µs per claim + release: the median round (the range); memcached's over all rounds`,
  '',
  '| shape | plain | TLS | TLS / plain | memcached, plain | memcached, TLS |',
  '|---|---|---|---|---|---|',
  ...SHAPES.map((shape) => {
    const [p, t] = [perClaim[shape].plain, perClaim[shape].tls];
    const range = (xs: number[]) => `${fmt(median(xs))} (${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))})`;
    const mc = (v: Variant) => fmt(server[shape][v].micros / server[shape][v].claims);
    return `| ${shape} | ${range(p)} | ${range(t)} | **${(median(t) / median(p)).toFixed(2)}×** | ${mc('plain')} | ${mc('tls')} |`;
  }),
];
console.log(lines.join('\n'));
