import { randomBytes } from 'node:crypto';
import { DeleteItemCommand, type DynamoDBClient, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { KeyValueAnswer, type KeyValueCalls, type KeyValues } from '../ports/key-values.js';
import { conditional, type Item } from './dynamodb-items.js';

/*
 * The key-value port (ports/key-values.ts) on the job store's DynamoDB table, so that the dedupe
 * lock's protocol (fleet/lock.ts) runs where there is no memcached (a Lambda function outside a
 * VPC). A key is the item `kv#<key>`: its value `v`, its version `ver` (a random 52-bit number per
 * write, never 0) and when it expires, `expMs` (0: never). DynamoDB's TTL deletes an expired item
 * up to days late, so every read and every condition asks `expMs` against the caller's clock: an
 * expired item is treated as absent whether or not it is still there (`expiresAt`, the TTL
 * attribute, only clears it out). Counters and appends are a read and a write on the version, tried
 * again when another write came between (the lock uses neither).
 */

/** DynamoDB's item size is 400 KB; a value is kept under it with room for the key and attributes. */
export const DYNAMO_MAX_VALUE_BYTES = 390_000;
/** An expired item is left for DynamoDB's TTL this long past its expiry (a late reader still sees it as expired). */
const TTL_MARGIN_S = 3_600;
/** A read-then-write (increment, append) that keeps meeting other writes gives up after this many tries. */
const TRIES = 20;

const LIVE = 'attribute_exists(pk) AND (expMs = :zero OR expMs > :now)';
const FREE = 'attribute_not_exists(pk) OR (expMs <> :zero AND expMs <= :now)';

export class DynamoKeyValues implements KeyValues, KeyValueCalls {
  readonly #client: DynamoDBClient;
  readonly #table: string;
  readonly #ownsClient: boolean;
  #closed = false;

  constructor(o: { readonly client: DynamoDBClient; readonly table: string; readonly ownsClient?: boolean }) {
    this.#client = o.client;
    this.#table = o.table;
    this.#ownsClient = o.ownsClient ?? false;
  }

  get closed(): boolean {
    return this.#closed;
  }

  call<T>(op: (kv: KeyValues) => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the DynamoDB key-value store is closed'));
    return op(this);
  }

  ok<T>(result: T): T {
    return result;
  }

  failed<T>(result: T, _error: unknown): T {
    return result;
  }

  close(): void {
    this.#closed = true;
    if (this.#ownsClient) this.#client.destroy();
  }

  async get(key: string): Promise<string | null> {
    return (await this.getWithCas(key))?.value ?? null;
  }

  async getWithCas(key: string): Promise<{ readonly value: string; readonly cas: bigint } | null> {
    const answer = await this.#client.send(new GetItemCommand({ TableName: this.#table, Key: this.#key(key), ConsistentRead: true }));
    const item = answer.Item;
    if (item === undefined) return null;
    const expMs = Number(item.expMs?.N ?? 0);
    if (expMs !== 0 && expMs <= Date.now()) return null;
    return { value: item.v?.S ?? '', cas: BigInt(item.ver?.N ?? 0) };
  }

  add(key: string, value: string, expires: number): Promise<boolean> {
    return this.#put(key, value, expires, FREE, this.#now());
  }

  async set(key: string, value: string, expires: number): Promise<void> {
    await this.#put(key, value, expires);
  }

  setIf(key: string, value: string, expires: number, cas: bigint): Promise<boolean> {
    return this.#put(key, value, expires, `ver = :cas AND (${LIVE})`, { ...this.#now(), ':cas': { N: String(cas) } });
  }

  touch(key: string, expires: number): Promise<boolean> {
    const expMs = expiryOf(expires);
    return this.#update(key, 'SET expMs = :exp, expiresAt = :ttl', LIVE, {
      ...this.#now(),
      ':exp': { N: String(expMs) },
      ':ttl': { N: String(ttlOf(expMs)) },
    });
  }

  delete(key: string): Promise<boolean> {
    return this.#delete(key, LIVE, this.#now());
  }

  deleteIf(key: string, cas: bigint): Promise<boolean> {
    return this.#delete(key, `ver = :cas AND (${LIVE})`, { ...this.#now(), ':cas': { N: String(cas) } });
  }

  async increment(key: string, amount: number, initial: number, expires: number): Promise<number> {
    return this.#rewrite(key, async (read) => {
      if (read === null) return (await this.add(key, String(initial), expires)) ? initial : undefined;
      if (!/^\d+$/.test(read.value)) throw new KeyValueAnswer(`the value of ${key} is not a number`);
      const next = Number(read.value) + amount;
      return (await this.#replace(key, String(next), read.cas)) ? next : undefined;
    });
  }

  async append(key: string, value: string): Promise<boolean> {
    return this.#rewrite(key, async (read) => {
      if (read === null) return false;
      const next = read.value + value;
      if (Buffer.byteLength(next) > DYNAMO_MAX_VALUE_BYTES) return false;
      return (await this.#replace(key, next, read.cas)) ? true : undefined;
    });
  }

  /** Read the key and write from what was read, again while another write came between (`write` answers undefined). */
  async #rewrite<T>(key: string, write: (read: { value: string; cas: bigint } | null) => Promise<T | undefined>): Promise<T> {
    for (let tries = 0; tries < TRIES; tries++) {
      const done = await write(await this.getWithCas(key));
      if (done !== undefined) return done;
    }
    throw new Error(`the DynamoDB key ${key} kept changing under ${TRIES} tries`);
  }

  /** A new value at the version read, keeping the key's expiry. */
  #replace(key: string, value: string, cas: bigint): Promise<boolean> {
    return this.#update(key, 'SET v = :v, ver = :ver', `ver = :cas AND (${LIVE})`, {
      ...this.#now(),
      ':v': { S: value },
      ':ver': { N: newVersion() },
      ':cas': { N: String(cas) },
    });
  }

  #key(key: string): Item {
    return { pk: { S: `kv#${key}` } };
  }

  #now(): Item {
    return { ':zero': { N: '0' }, ':now': { N: String(Date.now()) } };
  }

  async #put(key: string, value: string, expires: number, condition?: string, values?: Item): Promise<boolean> {
    if (Buffer.byteLength(value) > DYNAMO_MAX_VALUE_BYTES)
      throw new KeyValueAnswer(`the value of ${key} is over ${DYNAMO_MAX_VALUE_BYTES} bytes`);
    const expMs = expiryOf(expires);
    const item: Item = {
      ...this.#key(key),
      kind: { S: 'kv' },
      v: { S: value },
      ver: { N: newVersion() },
      expMs: { N: String(expMs) },
      ...(expMs === 0 ? {} : { expiresAt: { N: String(ttlOf(expMs)) } }),
    };
    return conditional(() =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.#table,
          Item: item,
          ...(condition === undefined ? {} : { ConditionExpression: condition, ExpressionAttributeValues: values }),
        }),
      ),
    );
  }

  #update(key: string, expression: string, condition: string, values: Item): Promise<boolean> {
    return conditional(() =>
      this.#client.send(
        new UpdateItemCommand({
          TableName: this.#table,
          Key: this.#key(key),
          UpdateExpression: expression,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }

  #delete(key: string, condition: string, values: Item): Promise<boolean> {
    return conditional(() =>
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#table,
          Key: this.#key(key),
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      ),
    );
  }
}

/** When a key written now with `expires` seconds expires (epoch ms; 0: never). */
function expiryOf(expires: number): number {
  return expires === 0 ? 0 : Date.now() + expires * 1000;
}

function ttlOf(expMs: number): number {
  return Math.ceil(expMs / 1000) + TTL_MARGIN_S;
}

/** A version no write has had: 52 random bits, never 0 (a version of 0 matches no write, as memcached -C's). */
function newVersion(): string {
  return String((randomBytes(8).readBigUInt64BE(0) >> 12n) | 1n);
}
