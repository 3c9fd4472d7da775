import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemcachedClient } from '../../src/adapters/memcached-client.js';
import { MemcachedStatusError } from '../../src/adapters/memcached-wire.js';
import { LOCAL_MEMCACHED, memcachedClient, sleep } from '../helpers/stack.js';
import { PrivateMemcached, choppingProxy, droppingProxy, noopCountingProxy, freePort, slowProxy } from '../helpers/memcached.js';

const k = () => `clienttest:${randomUUID()}`;

describe('MemcachedClient on a real memcached', () => {
  const client = new MemcachedClient(LOCAL_MEMCACHED, 2_000);
  afterAll(() => client.close());

  it('answers each command as memcached does', async () => {
    const key = k();
    expect(await client.get(key)).toBeNull();
    expect(await client.add(key, 'één', 60)).toBe(true);
    expect(await client.add(key, 'two', 60)).toBe(false);
    expect(await client.get(key)).toBe('één');
    await client.set(key, 'three', 60);
    expect(await client.append(key, '+more')).toBe(true);
    expect(await client.get(key)).toBe('three+more');
    expect(await client.append(k(), 'x')).toBe(false);
    expect(await client.touch(key, 120)).toBe(true);
    expect(await client.touch(k(), 120)).toBe(false);
    expect(await client.delete(key)).toBe(true);
    expect(await client.delete(key)).toBe(false);
    const counter = k();
    expect(await client.increment(counter, 5, 7, 60)).toBe(7); // created holding the initial value
    expect(await client.increment(counter, 5, 7, 60)).toBe(12);
    expect(await client.increment(counter, 2 ** 40, 0, 60)).toBe(2 ** 40 + 12);
  });

  it('deletes only the version it read (CAS): a key changed since is left alone', async () => {
    const key = k();
    await client.set(key, 'mine', 60);
    const read = await client.getWithCas(key);
    expect(read?.value).toBe('mine');
    await client.set(key, 'theirs', 60); // another holder, after the read
    expect(await client.deleteIf(key, read!.cas)).toBe(false);
    expect(await client.get(key)).toBe('theirs');
    const again = await client.getWithCas(key);
    expect(await client.deleteIf(key, again!.cas)).toBe(true);
    expect(await client.getWithCas(key)).toBeNull();
    expect(await client.deleteIf(key, again!.cas)).toBe(false);
  });

  it('sets only over the version it read (CAS): a key changed since, or gone, is left alone', async () => {
    const key = k();
    await client.set(key, 'mine', 60);
    const read = await client.getWithCas(key);
    await client.set(key, 'theirs', 60); // another holder, after the read
    expect(await client.setIf(key, 'replaced', 60, read!.cas)).toBe(false);
    expect(await client.get(key)).toBe('theirs');
    const again = await client.getWithCas(key);
    expect(await client.setIf(key, 'replaced', 60, again!.cas)).toBe(true);
    expect(await client.get(key)).toBe('replaced');
    await client.delete(key);
    expect(await client.setIf(key, 'back', 60, again!.cas)).toBe(false);
    expect(await client.get(key)).toBeNull();
  });

  it('writes what memjs reads, and reads what memjs writes', async () => {
    const raw = memcachedClient();
    const [a, b] = [k(), k()];
    await client.set(a, 'from us', 60);
    await raw.set(b, 'from memjs', { expires: 60 });
    expect((await raw.get(a)).value?.toString()).toBe('from us');
    expect(await client.get(b)).toBe('from memjs');
    raw.close();
  });

  it('matches every reply with its request when many of every kind leave in one write', async () => {
    const keys = Array.from({ length: 300 }, k);
    await Promise.all(keys.filter((_, i) => i % 3 === 0).map((key) => client.set(key, `v-${key}`, 60)));
    // One tick: quiet gets that hit and miss, quiet adds that store and refuse, loud touches and increments.
    const answers = await Promise.all(
      keys.flatMap((key, i) => [
        client.get(key),
        client.touch(key, 60),
        client.add(key, 'new', 60),
        client.increment(`${key}:n`, 1, i, 60),
      ]),
    );
    keys.forEach((key, i) => {
      const had = i % 3 === 0;
      expect(answers.slice(i * 4, i * 4 + 4)).toEqual([had ? `v-${key}` : null, had, !had, i]);
    });
  });

  it('counts every increment when several connections create the same counter at once', async () => {
    // memcached's binary incr creates a missing counter in two steps (a miss, then an add): two
    // connections that both miss race, and the loser is answered "not stored". Each must still count.
    const others = Array.from({ length: 3 }, () => new MemcachedClient(LOCAL_MEMCACHED, 2_000));
    const clients = [client, ...others];
    try {
      for (let round = 0; round < 20; round++) {
        const counters = Array.from({ length: 50 }, k);
        const answers = await Promise.all(counters.flatMap((counter) => clients.map((c) => c.increment(counter, 1, 1, 60))));
        for (let i = 0; i < counters.length; i++) {
          expect(answers.slice(i * clients.length, (i + 1) * clients.length).sort()).toEqual([1, 2, 3, 4]);
        }
      }
    } finally {
      for (const c of others) c.close();
    }
  });

  it('round-trips a value of 100 KB', async () => {
    const key = k();
    const value = 'x'.repeat(100_000);
    await client.set(key, value, 60);
    expect(await client.get(key)).toBe(value);
  });

  it("rejects with memcached's own error, naming the command, and the connection goes on", async () => {
    const text = k();
    await client.set(text, 'not a number', 60);
    const incr = client.increment(text, 1, 0, 60);
    await expect(incr).rejects.toBeInstanceOf(MemcachedStatusError);
    await expect(incr).rejects.toThrow('memcached answered incr with status 0x6 (non-numeric value)');
    // An append past memcached's item size (1 MB by default), as a full tenant-meter key's: refused.
    await client.set(text, 'x'.repeat(600_000), 60);
    expect(await client.append(text, 'y'.repeat(600_000))).toBe(false);
    // A key past memcached's 250 bytes is refused as memcached would, without failing its neighbours.
    const neighbour = k();
    const [long, next] = await Promise.allSettled([client.get('k'.repeat(251)), client.add(neighbour, 'n', 60)]);
    expect(long.status === 'rejected' && String(long.reason)).toMatch(/answered get with status 0x4 \(invalid arguments\)/);
    expect(next).toEqual({ status: 'fulfilled', value: true });
    const key = k();
    expect(await client.add(key, 'still fine', 60)).toBe(true);
    expect(await client.get(key)).toBe('still fine');
  });
});

describe('MemcachedClient when the network or the server misbehaves', () => {
  let memcached: PrivateMemcached;
  beforeAll(async () => {
    memcached = await PrivateMemcached.start();
  });
  afterAll(() => memcached.stop());

  it('writes the requests of one turn of the event loop together, made in separate callbacks', async () => {
    const proxy = await noopCountingProxy(memcached.port);
    const counted = new MemcachedClient(`127.0.0.1:${proxy.port}`, 2_000);
    await counted.set(k(), 'connect first', 60);
    const before = proxy.noops();
    // Five immediates run in one check phase, each callback followed by its own ticks.
    const keys = Array.from({ length: 5 }, k);
    const answers = await Promise.all(
      keys.map((key) => new Promise<boolean>((resolve) => setImmediate(() => resolve(counted.add(key, 'v', 60))))),
    );
    expect(answers).toEqual([true, true, true, true, true]);
    // Quiet adds: a write that holds any ends with a NOOP, so one NOOP is one write.
    expect(proxy.noops() - before).toBe(1);
    counted.close();
    await proxy.close();
  });

  it('reads replies cut into pieces of a few bytes', async () => {
    const proxy = await choppingProxy(memcached.port, 3);
    const chopped = new MemcachedClient(`127.0.0.1:${proxy.port}`, 2_000);
    const keys = Array.from({ length: 50 }, k);
    await Promise.all(keys.map((key) => chopped.set(key, `value of ${key}`, 60)));
    expect(await Promise.all(keys.map((key) => chopped.get(key)))).toEqual(keys.map((key) => `value of ${key}`));
    chopped.close();
    await proxy.close();
  });

  it('takes no quiet request as done on a reply it cannot match: it fails them all and reconnects', async () => {
    // Not memcached (which answers in order): a server that answers a request nobody made.
    const server = createServer((socket) =>
      socket.once('data', () => {
        const reply = Buffer.alloc(24);
        reply.writeUInt32BE(0x81020000, 0); // an add's reply
        reply.writeUInt32BE(0xfffffff0, 12); // to no request sent
        socket.write(reply);
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const wrong = new MemcachedClient(`127.0.0.1:${(server.address() as AddressInfo).port}`, 2_000);
    const claim = wrong.add(k(), 'a', 60);
    await expect(claim).rejects.toThrow(/answered a request out of order/);
    wrong.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails a request that gets no reply even while the event loop is always busy', async () => {
    const silent = createServer((socket) => socket.resume()); // reads, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const stuck = new MemcachedClient(`127.0.0.1:${(silent.address() as AddressInfo).port}`, 200);
    let failed = false;
    stuck.add(k(), 'a', 60).catch(() => (failed = true));
    // Up to 4 s of turns of 150 ms of CPU each: every deadline check comes late.
    const busyUntil = performance.now() + 4_000;
    while (performance.now() < busyUntil && !failed) {
      for (const until = performance.now() + 150; performance.now() < until; );
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(failed).toBe(true);
    stuck.close();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('fails at once when nothing listens', async () => {
    const down = new MemcachedClient(`127.0.0.1:${await freePort()}`, 2_000);
    await expect(down.get(k())).rejects.toThrow(/ECONNREFUSED/);
    down.close();
  });

  it('fails a request not answered within the timeout, and the next one goes on a new connection', async () => {
    const proxy = await slowProxy(memcached.port, 1_000);
    const slow = new MemcachedClient(`127.0.0.1:${proxy.port}`, 150);
    const started = performance.now();
    await expect(slow.get(k())).rejects.toThrow(/did not answer in \d+ ms \(timeout 150 ms\)/);
    expect(performance.now() - started).toBeLessThan(900); // failed by its own deadline, not by the late reply
    const key = k();
    expect(await slow.add(key, 'a', 60)).toBe(true);
    expect(await slow.get(key)).toBe('a');
    slow.close();
    await proxy.close();
  });

  it('fails the requests of a connection closed without a reply, then reconnects', async () => {
    const proxy = await droppingProxy(memcached.port, 1);
    const dropping = new MemcachedClient(`127.0.0.1:${proxy.port}`, 2_000);
    const lost = [dropping.get(k()), dropping.set(k(), 'x', 60)];
    for (const call of lost) await expect(call).rejects.toThrow(/closed the connection/);
    const key = k();
    expect(await dropping.add(key, 'a', 60)).toBe(true);
    dropping.close();
    await proxy.close();
  });

  it('goes on after memcached restarts', async () => {
    const c = new MemcachedClient(memcached.servers, 2_000);
    await c.set(k(), 'before', 60);
    await memcached.stop();
    await expect(c.get(k())).rejects.toThrow();
    await memcached.restart();
    const key = k();
    expect(await c.add(key, 'after', 60)).toBe(true);
    c.close();
  });

  it('answers what was asked before close(), and refuses what comes after', async () => {
    const c = new MemcachedClient(memcached.servers, 2_000);
    const key = k();
    const before = c.add(key, 'a', 60);
    c.close();
    expect(await before).toBe(true);
    await expect(c.get(key)).rejects.toThrow(/closed/);
    await sleep(10);
  });
});

describe('MemcachedClient over two servers', () => {
  it('puts each key on the server memjs would choose', async () => {
    const [one, two] = [await PrivateMemcached.start(), await PrivateMemcached.start()];
    const servers = `${one.servers},${two.servers}`;
    const c = new MemcachedClient(servers, 2_000);
    const raw = memcachedClient(servers);
    const keys = Array.from({ length: 40 }, k);
    await Promise.all(keys.map((key) => c.set(key, key, 60)));
    for (const key of keys) expect((await raw.get(key)).value?.toString()).toBe(key);
    // and both servers hold some: the keys were spread, not all sent to one
    const onOne = new MemcachedClient(one.servers, 2_000);
    const held = (await Promise.all(keys.map((key) => onOne.get(key)))).filter((v) => v !== null).length;
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(keys.length);
    for (const x of [c, onOne]) x.close();
    raw.close();
    await one.stop();
    await two.stop();
  });

  it("keeps a key's companion on the key's own server: a restart of that server takes both", async () => {
    const [one, two] = [await PrivateMemcached.start(), await PrivateMemcached.start()];
    const c = new MemcachedClient(`${one.servers},${two.servers}`, 2_000);
    const onOne = new MemcachedClient(one.servers, 2_000);
    const keys = Array.from({ length: 20 }, k);
    for (const key of keys) {
      const companion = c.companion(key, 'kept-since');
      expect(companion).toMatch(/^kept-since\/2\/\d+$/);
      await Promise.all([c.set(key, 'v', 60), c.set(companion, 'v', 60)]);
      expect((await onOne.get(key)) === null).toBe((await onOne.get(companion)) === null);
    }
    expect(new Set(keys.map((key) => c.companion(key, 'kept-since'))).size).toBe(2);
    expect(new MemcachedClient(one.servers, 500).companion('any', 'kept-since')).toBe('kept-since/1/0'); // a list of another length: others
    for (const x of [c, onOne]) x.close();
    await one.stop();
    await two.stop();
  });

  it('refuses a server string it cannot use, naming it', () => {
    expect(() => new MemcachedClient('user:pw@127.0.0.1:11211', 500)).toThrow(/user:pw@127.0.0.1:11211.*SASL/);
    expect(() => new MemcachedClient('127.0.0.1:99999', 500)).toThrow(/port must be 1-65535/);
  });
});
