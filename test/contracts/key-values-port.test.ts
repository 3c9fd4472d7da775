import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemcachedClient } from '../../src/adapters/memcached-client.js';
import { KeyValueAnswer, type KeyValues } from '../../src/ports/key-values.js';
import { MemoryKeyValues } from '../../src/testing/memory-key-values.js';
import { LOCAL_DYNAMODB, LOCAL_MEMCACHED, sleep } from '../helpers/stack.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { DYNAMO_MAX_VALUE_BYTES, DynamoKeyValues } from '../../src/adapters/dynamodb-key-values.js';

/**
 * The key-value port's contract: the meanings every fleet-wide protocol (src/fleet/: the lock,
 * permits, rate limits, allowances, the meters) relies on. It runs against memcached's client on
 * a real memcached, against MemoryKeyValues, on which the in-memory lock and the rest run the
 * same protocols (so the in-memory twins cannot drift from memcached), and against DynamoDB's, on
 * which the lock runs where there is no memcached.
 */
const client = new MemcachedClient(LOCAL_MEMCACHED, 2_000);
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `kv-${randomUUID().slice(0, 8)}`;
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
});
afterAll(() => {
  client.close();
  dynamo.destroy();
});

/** Each store with the largest value it keeps (memcached's item size; DynamoDB's item, less the key and attributes). */
const subjects: [string, KeyValues, number][] = [
  ['MemoryKeyValues', new MemoryKeyValues(), 1000 * 1000],
  ['memcached (MemcachedClient on a real server)', client, 1000 * 1000],
  ['DynamoDB (DynamoKeyValues on DynamoDB Local)', new DynamoKeyValues({ client: dynamo, table }), DYNAMO_MAX_VALUE_BYTES],
];

describe.each(subjects)('key-value port contract: %s', (_name, kv, maxBytes) => {
  const key = () => `kv-contract-${randomUUID()}`;

  it('get answers null for a missing key, the value once set; set overwrites', async () => {
    const k = key();
    expect(await kv.get(k)).toBeNull();
    await kv.set(k, 'one', 30);
    expect(await kv.get(k)).toBe('one');
    await kv.set(k, 'twó', 30);
    expect(await kv.get(k)).toBe('twó');
  });

  it('add stores only when the key does not exist', async () => {
    const k = key();
    expect(await kv.add(k, 'first', 30)).toBe(true);
    expect(await kv.add(k, 'second', 30)).toBe(false);
    expect(await kv.get(k)).toBe('first');
  });

  it('a version names the value as read: setIf and deleteIf act only while it holds', async () => {
    const k = key();
    await kv.set(k, 'a', 30);
    const read = await kv.getWithCas(k);
    expect(read?.value).toBe('a');
    await kv.set(k, 'b', 30); // changed since read
    expect(await kv.setIf(k, 'c', 30, read!.cas)).toBe(false);
    expect(await kv.deleteIf(k, read!.cas)).toBe(false);
    expect(await kv.get(k)).toBe('b');
    const again = await kv.getWithCas(k);
    expect(again!.cas).not.toBe(read!.cas);
    expect(await kv.setIf(k, 'c', 30, again!.cas)).toBe(true);
    expect(await kv.get(k)).toBe('c');
    const last = await kv.getWithCas(k);
    expect(await kv.deleteIf(k, last!.cas)).toBe(true);
    expect(await kv.getWithCas(k)).toBeNull();
    expect(await kv.setIf(k, 'd', 30, last!.cas)).toBe(false); // gone: not made again
  });

  it('delete and touch answer whether the key existed', async () => {
    const k = key();
    expect(await kv.delete(k)).toBe(false);
    expect(await kv.touch(k, 30)).toBe(false);
    await kv.set(k, 'x', 30);
    expect(await kv.touch(k, 30)).toBe(true);
    expect(await kv.delete(k)).toBe(true);
    expect(await kv.get(k)).toBeNull();
  });

  it('an increment creates a missing counter at its initial value, then adds', async () => {
    const k = key();
    expect(await kv.increment(k, 5, 3, 30)).toBe(3);
    expect(await kv.increment(k, 5, 3, 30)).toBe(8);
    expect(await kv.get(k)).toBe('8');
  });

  it('an increment of a value that holds no number is an answer (the store is up), not a failure to reach it', async () => {
    const k = key();
    await kv.set(k, 'not a number', 30);
    await expect(kv.increment(k, 1, 1, 30)).rejects.toBeInstanceOf(KeyValueAnswer);
  });

  it('append adds to an existing value only', async () => {
    const k = key();
    expect(await kv.append(k, 'b')).toBe(false);
    expect(await kv.get(k)).toBeNull();
    await kv.add(k, 'a', 30);
    expect(await kv.append(k, 'b')).toBe(true);
    expect(await kv.get(k)).toBe('ab');
  });

  it('an append past the item size (memcached: 1 MB) is refused, the value kept', async () => {
    const k = key();
    await kv.set(k, 'x'.repeat(maxBytes), 30);
    expect(await kv.append(k, 'y'.repeat(100 * 1000))).toBe(false);
    expect((await kv.get(k))?.length).toBe(maxBytes);
  });

  it('keys expire after their seconds; 0 never; touch sets a new expiry; an increment keeps its counter’s', async () => {
    const [short, never, touched, counter] = [key(), key(), key(), key()];
    await kv.set(short, 'x', 1);
    await kv.set(never, 'x', 0);
    await kv.set(touched, 'x', 1);
    expect(await kv.touch(touched, 30)).toBe(true);
    expect(await kv.increment(counter, 1, 1, 1)).toBe(1);
    expect(await kv.increment(counter, 1, 1, 30)).toBe(2);
    await sleep(2_100);
    expect(await kv.get(short)).toBeNull();
    expect(await kv.get(never)).toBe('x');
    expect(await kv.get(touched)).toBe('x');
    expect(await kv.get(counter)).toBeNull();
    await kv.delete(never);
  });
});
