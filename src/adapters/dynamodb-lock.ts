import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type Env, resolveDynamoSettings } from '../config/env.js';
import { brand } from '../core/brand.js';
import { KeyValueLock } from '../fleet/lock.js';
import { createDynamoClient } from './aws-clients.js';
import { DynamoKeyValues } from './dynamodb-key-values.js';

/**
 * How the lock's calls ride out a slow DynamoDB: a claim waits for its answer before the job
 * starts, so each attempt may take 3 s, and a dropped or throttled one is tried 3 times; past that
 * the lock answers `unavailable`, as MemcachedLock does when memcached does not answer.
 */
const LOCK_CLIENT = { maxSockets: 50, requestTimeoutMs: 3_000, maxAttempts: 3 } as const;

/** What a DynamoLock is made with: the job store's table, and a client or where to make one. */
export interface DynamoLockOptions {
  /** The job store's table (`sqs-jobs store create`): the lock's keys are its items `kv#<prefix><job id>`. */
  readonly table: string;
  /** A client of yours (left open by close()); else one is made for `endpoint` and `region` (default: as the job store's, from the environment). */
  readonly client?: DynamoDBClient;
  readonly endpoint?: string;
  readonly region?: string;
  /** Default `sqsjobs:`: workers, producers and the dashboard must agree on it. */
  readonly keyPrefix?: string;
}

/**
 * The dedupe lock (JobLock) on DynamoDB: the protocol MemcachedLock runs (fleet/lock.ts), on the
 * job store's table through DynamoKeyValues, for workers with no memcached to reach (a Lambda
 * function outside a VPC). Expiry is checked in each write's condition, not left to the table's
 * TTL. It passes the lock's contract test (test/contracts/lock-port.test.ts) on DynamoDB Local.
 * What needs memcached still (admission's drain counts, tenant caps, rate limits) is not here.
 */
export class DynamoLock extends KeyValueLock {
  static {
    brand(DynamoLock, 'sqs-jobs/DynamoLock');
  }
  readonly #kv: DynamoKeyValues;

  constructor(options: DynamoLockOptions, env: Env = process.env) {
    const aws = () =>
      resolveDynamoSettings({ endpoint: options.endpoint, region: options.region }, env, { endpoint: 'endpoint', region: 'region' });
    const client = options.client ?? createDynamoClient(aws(), LOCK_CLIENT, env);
    const kv = new DynamoKeyValues({ client, table: options.table, ownsClient: options.client === undefined });
    super(kv, options.keyPrefix ?? 'sqsjobs:');
    this.#kv = kv;
  }

  /** Closes the client it made (not one given). */
  override close(): void {
    this.#kv.close();
  }
}
