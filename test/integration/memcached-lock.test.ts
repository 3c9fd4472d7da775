import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import { LOCAL_MEMCACHED, eventually, memcachedClient, sleep } from '../helpers/stack.js';
import { PrivateMemcached, droppingProxy, freePort, slowProxy } from '../helpers/memcached.js';

const prefix = `locktest-${randomUUID().slice(0, 8)}:`;
const lock = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: prefix });
const raw = memcachedClient();
afterAll(() => {
  lock.close();
  raw.close();
});

describe('MemcachedLock on a real memcached', () => {
  it('claims once; a second claim sees it running; after complete it sees it completed', async () => {
    const id = randomUUID();
    expect(await lock.claim(id, 'a', 30)).toBe('claimed');
    expect(await lock.claim(id, 'b', 30)).toBe('running');
    expect(await lock.complete(id, 'a', 60)).toBe(true);
    expect(await lock.claim(id, 'c', 30)).toBe('completed');
  });

  it('tells a redelivered copy from another message carrying the same running job', async () => {
    const id = randomUUID();
    expect(await lock.claim(id, 'a', 30, { messageId: 'm-1', receiveCount: 1 })).toBe('claimed');
    expect(await lock.claim(id, 'b', 30, { messageId: 'm-1', receiveCount: 2 })).toBe('running'); // the same message again
    expect(await lock.claim(id, 'c', 30, { messageId: 'm-2', receiveCount: 1 })).toBe('running-copy'); // a second message
    expect(await lock.extend(id, 'a', 30)).toBe('held');
    expect(await lock.release(id, 'a')).toBe(true);
    expect(await lock.claim(id, 'd', 30, { messageId: 'm-2', receiveCount: 1 })).toBe('claimed');
  });

  it('remembers a dead-lettered message by its message id: its leftover is refused, a replay of the job runs', async () => {
    const id = randomUUID();
    const messageId = randomUUID();
    await lock.claim(id, 'a', 30, { messageId, receiveCount: 3 });
    expect(await lock.markDeadLettered(messageId, 1)).toBe(true);
    await lock.release(id, 'a');
    // the same message, back because its delete failed
    expect(await lock.claim(id, 'b', 30, { messageId, receiveCount: 4 })).toBe('dead-lettered');
    // a replay from the DLQ is a new message with the same job id: it runs at once
    expect(await lock.claim(id, 'c', 30, { messageId: randomUUID(), receiveCount: 1 })).toBe('claimed');
    await lock.release(id, 'c');
    await sleep(2_100);
    expect(await lock.claim(id, 'd', 30, { messageId, receiveCount: 5 })).toBe('claimed'); // the mark expires
  });

  it('where memcached keeps no item versions (-C), leave answers false (the worker releases instead) and a leaving claim is never taken over', async () => {
    const noCas = await PrivateMemcached.start(['-C']);
    const l = new MemcachedLock({ servers: noCas.servers, keyPrefix: prefix });
    try {
      const id = randomUUID();
      expect(await l.claim(id, 'a', 30, { messageId: 'm-1', receiveCount: 1 })).toBe('claimed');
      expect(await l.leave(id, 'a', 30)).toBe(false);
      expect(await l.claim(id, 'b', 30, { messageId: 'm-2', receiveCount: 1 })).toBe('running-copy'); // unchanged
      // A leaving claim written where versions were kept: without them it cannot be taken over safely.
      const direct = memcachedClient(noCas.servers);
      await direct.set(l.key(id), 'leaving:a:m-1', { expires: 30 });
      expect(await l.claim(id, 'c', 30, { messageId: 'm-3', receiveCount: 1 })).toBe('running');
      expect(await l.release(id, 'a')).toBe(true);
      expect(await l.claim(id, 'c', 30, { messageId: 'm-3', receiveCount: 1 })).toBe('claimed');
      direct.close();
    } finally {
      l.close();
      await noCas.stop();
    }
  });

  it('extends only while the token still holds the key, and release frees it only for its owner', async () => {
    const id = randomUUID();
    await lock.claim(id, 'a', 30);
    expect(await lock.extend(id, 'a', 30)).toBe('held');
    expect(await lock.extend(id, 'b', 30)).toBe('lost');
    expect(await lock.release(id, 'b')).toBe(true);
    expect(await lock.claim(id, 'b', 30)).toBe('running'); // b's release did not free a's lock
    await lock.release(id, 'a');
    expect(await lock.claim(id, 'b', 30)).toBe('claimed');
  });

  it('lets the lock expire with its TTL', async () => {
    const id = randomUUID();
    await lock.claim(id, 'a', 1);
    await sleep(2_100);
    expect(await lock.claim(id, 'b', 30)).toBe('claimed');
    expect(await lock.extend(id, 'a', 30)).toBe('lost');
  });

  it('says unavailable, never running, when nothing listens', async () => {
    let outages = 0;
    const down = new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, onAvailability: (up) => void (!up && outages++) });
    expect(await down.claim(randomUUID(), 'a', 30)).toBe('unavailable');
    expect(await down.extend(randomUUID(), 'a', 30)).toBe('unavailable');
    expect(outages).toBe(1); // reported once per outage
    down.close();
  });

  describe('a reply slower than the timeout (the memjs retry trap)', () => {
    let memcached: PrivateMemcached;
    beforeAll(async () => {
      memcached = await PrivateMemcached.start();
    });
    afterAll(() => memcached.stop());

    it('reports unavailable instead of a false "running" even though the add reached memcached', async () => {
      const proxy = await slowProxy(memcached.port, 400);
      const slow = new MemcachedLock({ servers: `127.0.0.1:${proxy.port}`, timeoutMs: 150, keyPrefix: prefix });
      const id = randomUUID();
      expect(await slow.claim(id, 'a', 30, { messageId: 'm-1', receiveCount: 1 })).toBe('unavailable');
      // the add did land: memcached holds our token, so a retried add would have said "exists"
      const direct = memcachedClient(memcached.servers);
      const { value } = await direct.get(`${prefix}${id}`);
      expect(value?.toString()).toBe('running:a:m-1');
      direct.close();
      slow.close();
      await proxy.close();
    });

    it('answers every call when memcached closes the connection without a reply, then goes on', async () => {
      // memjs leaves a call unanswered for good when its socket closes without an error (a server
      // restarting, a middlebox dropping an idle connection). A lock call that never settles would
      // hold its message, and the worker's stop, for good: the lock gives every call a deadline.
      const proxy = await droppingProxy(memcached.port, 2);
      const dropping = new MemcachedLock({ servers: `127.0.0.1:${proxy.port}`, timeoutMs: 150, keyPrefix: prefix });
      const unanswered = Symbol('unanswered');
      const answered = <T>(call: Promise<T>) => Promise.race([call, sleep(3_000).then(() => unanswered)]);
      const id = randomUUID();
      expect(await answered(dropping.claim(id, 'a', 30))).toBe('unavailable');
      expect(await answered(dropping.extend(id, 'a', 30))).toBe('unavailable');
      expect(await answered(dropping.claim(id, 'a', 30))).toBe('claimed');
      dropping.close();
      await proxy.close();
    });

    it('tries a release that failed again, so the job is not held until its TTL', async () => {
      const direct = new MemcachedLock({ servers: memcached.servers, keyPrefix: prefix });
      const id = randomUUID();
      expect(await direct.claim(id, 'a', 60)).toBe('claimed');
      const proxy = await droppingProxy(memcached.port, 1);
      const dropping = new MemcachedLock({ servers: `127.0.0.1:${proxy.port}`, timeoutMs: 150, keyPrefix: prefix });
      expect(await dropping.release(id, 'a')).toBe(false);
      // Still held now; freed by a retry (1 s later, or 5 s after that when a loaded machine makes
      // the first retry miss its 150 ms timeout too), long before the 60 s TTL.
      expect(await direct.claim(id, 'b', 60)).toBe('running');
      await eventually(async () => (await direct.claim(id, 'b', 60)) === 'claimed', 'the retried release', 10_000);
      dropping.close();
      direct.close();
      await proxy.close();
    });
  });
});
