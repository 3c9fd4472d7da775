import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemcachedLock } from '../../src/adapters/memcached-lock.js';
import type { JobLock } from '../../src/ports/lock.js';
import { freePort } from '../helpers/memcached.js';
import { MemoryLock } from '../../src/testing/memory-lock.js';
import { LOCAL_DYNAMODB, LOCAL_MEMCACHED, sleep } from '../helpers/stack.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { DynamoLock } from '../../src/adapters/dynamodb-lock.js';

/**
 * The dedupe lock's contract: what the worker relies on. It runs against the in-memory lock tests
 * hand the worker, against MemcachedLock on a real memcached, so the fake cannot drift, and
 * against DynamoLock on DynamoDB Local (the lock where there is no memcached).
 */
interface Subject {
  readonly lock: JobLock;
  /** A lock whose memcached cannot be reached. */
  unreachable(): Promise<JobLock>;
}

const memcached = new MemcachedLock({ servers: LOCAL_MEMCACHED, keyPrefix: `contract-${randomUUID().slice(0, 8)}:` });
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `lock-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
});
afterAll(() => {
  memcached.close();
  dynamo.destroy();
});

const subjects: [string, Subject][] = [
  [
    'in-memory lock',
    {
      lock: new MemoryLock(),
      unreachable: async () => Object.assign(new MemoryLock(), { down: true }),
    },
  ],
  [
    'MemcachedLock on a real memcached',
    {
      lock: memcached,
      unreachable: async () => new MemcachedLock({ servers: `127.0.0.1:${await freePort()}`, timeoutMs: 200 }),
    },
  ],
  [
    'DynamoLock on DynamoDB Local',
    {
      lock: new DynamoLock({ table, client: dynamo, keyPrefix: 'contract:' }),
      unreachable: async () => new DynamoLock({ table, endpoint: `http://127.0.0.1:${await freePort()}`, region: 'us-east-1' }, {}),
    },
  ],
];

describe.each(subjects)('lock port contract: %s', (_name, s) => {
  const message = (messageId: string, receiveCount = 1) => ({ messageId, receiveCount });

  it('claims a job id once; a redelivery of the same message reads running, another message running-copy', async () => {
    const id = randomUUID();
    expect(await s.lock.claim(id, 'a', 30, message('m-1'))).toBe('claimed');
    expect(await s.lock.claim(id, 'b', 30, message('m-1', 2))).toBe('running');
    expect(await s.lock.claim(id, 'c', 30, message('m-2'))).toBe('running-copy');
    // A copy re-sent from m-1 names it as its origin: the same delivery, not another message.
    expect(await s.lock.claim(id, 'd', 30, { messageId: 'm-3', originId: 'm-1', receiveCount: 1 })).toBe('running');
  });

  it('reads completed after complete, for every later message', async () => {
    const id = randomUUID();
    await s.lock.claim(id, 'a', 30, message('m-1'));
    expect(await s.lock.complete(id, 'a', 60)).toBe(true);
    expect(await s.lock.claim(id, 'b', 30, message('m-2'))).toBe('completed');
    expect(await s.lock.claim(id, 'c', 30, message('m-1', 2))).toBe('completed');
  });

  it('extends and releases only for the token that holds it', async () => {
    const id = randomUUID();
    await s.lock.claim(id, 'a', 30, message('m-1'));
    expect(await s.lock.extend(id, 'a', 30)).toBe('held');
    expect(await s.lock.extend(id, 'other', 30)).toBe('lost');
    expect(await s.lock.release(id, 'other')).toBe(true);
    expect(await s.lock.claim(id, 'b', 30, message('m-2'))).toBe('running-copy'); // still held by a
    expect(await s.lock.release(id, 'a')).toBe(true);
    expect(await s.lock.extend(id, 'a', 30)).toBe('lost');
    expect(await s.lock.claim(id, 'b', 30, message('m-2'))).toBe('claimed');
  });

  it('remembers a dead-lettered message by its id: its redelivery is refused, a new message of the job runs', async () => {
    const id = randomUUID();
    const messageId = randomUUID();
    await s.lock.claim(id, 'a', 30, message(messageId, 3));
    expect(await s.lock.markDeadLettered(messageId, 60)).toBe(true);
    await s.lock.release(id, 'a');
    expect(await s.lock.claim(id, 'b', 30, message(messageId, 4))).toBe('dead-lettered');
    expect(await s.lock.claim(id, 'c', 30, message(randomUUID()))).toBe('claimed'); // a replay: a new message
  });

  it('remembers a dead-lettered message by its origin: a copy the worker re-sent of it is refused even on its first receive', async () => {
    const id = randomUUID();
    const origin = randomUUID();
    await s.lock.claim(id, 'a', 30, { messageId: randomUUID(), originId: origin, receiveCount: 2 });
    expect(await s.lock.markDeadLettered(origin, 60)).toBe(true);
    await s.lock.release(id, 'a');
    expect(await s.lock.claim(id, 'b', 30, { messageId: randomUUID(), originId: origin, receiveCount: 1 })).toBe('dead-lettered');
    expect(await s.lock.claim(id, 'c', 30, message(origin, 2))).toBe('dead-lettered'); // the original, back
    expect(await s.lock.claim(id, 'd', 30, message(randomUUID()))).toBe('claimed'); // a replay
  });

  it('leave (its message on its way to the DLQ): a copy of that message reads running, a replay claims the job', async () => {
    const id = randomUUID();
    expect(await s.lock.claim(id, 'a', 30, message('m-1', 2))).toBe('claimed');
    expect(await s.lock.leave!(id, 'other', 30)).toBe(false); // not its claim: nothing changes
    expect(await s.lock.claim(id, 'x', 30, message('m-2'))).toBe('running-copy');
    expect(await s.lock.leave!(id, 'a', 30)).toBe(true);
    expect(await s.lock.extend(id, 'a', 30)).toBe('lost'); // no longer running
    // The same message delivered again, even as its first receive (SQS counts are approximate), or a copy re-sent from it.
    expect(await s.lock.claim(id, 'b', 30, message('m-1'))).toBe('running');
    expect(await s.lock.claim(id, 'b', 30, { messageId: 'm-3', originId: 'm-1', receiveCount: 1 })).toBe('running');
    // Another message of the job (a replay of it from the DLQ) takes the job id at once.
    expect(await s.lock.claim(id, 'c', 30, message('m-4'))).toBe('claimed');
    expect(await s.lock.release(id, 'a')).toBe(true); // the leaving holder's release frees nothing of c's
    expect(await s.lock.claim(id, 'd', 30, message('m-5'))).toBe('running-copy');

    const alone = randomUUID();
    await s.lock.claim(alone, 'a', 30, message('m-6'));
    expect(await s.lock.leave!(alone, 'a', 30)).toBe(true);
    expect(await s.lock.release(alone, 'a')).toBe(true);
    expect(await s.lock.claim(alone, 'b', 30, message('m-6', 2))).toBe('claimed'); // released: free for anyone
  });

  it('holder: the token of the claim holding the job id, running or leaving; none once it is free, done or never claimed', async () => {
    const id = randomUUID();
    expect(await s.lock.holder!(id)).toBeUndefined();
    await s.lock.claim(id, 'tok.1', 30, message('m-1'));
    expect(await s.lock.holder!(id)).toBe('tok.1');
    expect(await s.lock.leave!(id, 'tok.1', 30)).toBe(true);
    expect(await s.lock.holder!(id)).toBe('tok.1');
    await s.lock.release(id, 'tok.1');
    expect(await s.lock.holder!(id)).toBeUndefined();
    await s.lock.claim(id, 'tok.2', 30); // a claim that names no message (an older worker's value)
    expect(await s.lock.holder!(id)).toBe('tok.2');
    await s.lock.complete(id, 'tok.2', 30);
    expect(await s.lock.holder!(id)).toBeUndefined();
  });

  it("a cancel mark: later claims read cancelled, the holder's extend reads cancelled, a release leaves it", async () => {
    const waiting = randomUUID();
    expect(await s.lock.cancel!(waiting, 60)).toBe(true);
    expect(await s.lock.claim(waiting, 'a', 30, message('m-1'))).toBe('cancelled');
    expect(await s.lock.claim(waiting, 'b', 30, message('m-1', 2))).toBe('cancelled');

    const running = randomUUID();
    expect(await s.lock.claim(running, 'a', 30, message('m-2'))).toBe('claimed');
    expect(await s.lock.cancel!(running, 60)).toBe(true);
    expect(await s.lock.extend(running, 'a', 30)).toBe('cancelled');
    expect(await s.lock.release(running, 'a')).toBe(true);
    expect(await s.lock.claim(running, 'c', 30, message('m-3'))).toBe('cancelled');

    // A job that completed and is then cancelled (a fan-out parent waiting for its children): its duplicates are not run either.
    const completed = randomUUID();
    await s.lock.claim(completed, 'a', 30, message('m-4'));
    await s.lock.complete(completed, 'a', 60);
    await s.lock.cancel!(completed, 60);
    expect(await s.lock.claim(completed, 'b', 30, message('m-5'))).toBe('cancelled');
  });

  it("a fan-out child reads its parent's cancel mark: not yet claimed, it is cancelled; other jobs are not", async () => {
    const parent = randomUUID();
    const before = `${parent}.c0`;
    expect(await s.lock.claim(before, 'a', 30, { messageId: 'm-1', receiveCount: 1, parentId: parent })).toBe('claimed');
    expect(await s.lock.cancel!(parent, 60)).toBe(true);
    expect(await s.lock.claim(`${parent}.c1`, 'b', 30, { messageId: 'm-2', receiveCount: 1, parentId: parent })).toBe('cancelled');
    expect(await s.lock.claim(`${parent}.c2`, 'c', 30, { messageId: 'm-3', receiveCount: 1 })).toBe('claimed'); // names no parent
    expect(await s.lock.extend(before, 'a', 30)).toBe('held'); // one already running goes on
  });

  it('keptSince: when it began keeping marks, no later than the first ask, the same for every job while it keeps them', async () => {
    const since = await s.lock.keptSince!(randomUUID());
    expect(since).toBeLessThanOrEqual(Date.now());
    await sleep(1_100); // past what one lock trusts of its last reading: read from the store again
    expect(await s.lock.keptSince!(randomUUID())).toBe(since);
  });

  it('lets a claim expire with its TTL', async () => {
    const id = randomUUID();
    await s.lock.claim(id, 'a', 1, message('m-1'));
    await sleep(2_200);
    expect(await s.lock.claim(id, 'b', 30, message('m-1', 2))).toBe('claimed');
  });

  it('answers unavailable (or false), never taken, when memcached cannot be reached', async () => {
    const down = await s.unreachable();
    const id = randomUUID();
    expect(await down.claim(id, 'a', 30, message('m-1'))).toBe('unavailable');
    expect(await down.extend(id, 'a', 30)).toBe('unavailable');
    expect(await down.complete(id, 'a', 30)).toBe(false);
    expect(await down.markDeadLettered('m-1', 30)).toBe(false);
    expect(await down.leave!(id, 'a', 30)).toBe(false);
    expect(await down.holder!(id)).toBeUndefined();
    expect(await down.cancel!(id, 30)).toBe(false);
    expect(await down.keptSince!(id)).toBeUndefined();
    down.close();
  });
});
