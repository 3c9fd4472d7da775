/**
 * What bench/pause uses of sqs-jobs, from the built package (run.sh builds it into
 * .local/bench-pause/dist and sets BENCH_DIST; bench/lib/built.ts says why not src/ through tsx),
 * and the settings every part shares. Types come from src/.
 */
import { z } from 'zod';

const dist = process.env.BENCH_DIST ?? new URL('../../dist', import.meta.url).pathname;
const load = (path: string) => import(`${dist}/src/${path}`);

export const { createWorker, createProducer, defineJob } = (await load('index.js')) as typeof import('../../src/index.js');
export const { MemcachedLock, DynamoJobStore, SqsQueuePort, createSqsClient, createDynamoClient } = (await load(
  'adapters/index.js',
)) as typeof import('../../src/adapters/index.js');
export const { createJobTable } = (await load('adapters/dynamodb-store.js')) as typeof import('../../src/adapters/dynamodb-store.js');
export const { createPauses, createQueues } = (await load('ops/wiring.js')) as typeof import('../../src/ops/wiring.js');
export const { PAUSE_POLL_MS, PAUSE_REREAD_MS } = (await load('fleet/pause-watch.js')) as typeof import('../../src/fleet/pause-watch.js');

/** Fake credentials: every server is local. */
export const ENV = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x', AWS_REGION: 'us-east-1' };

/** Where the servers are (run.sh starts its own) and what a worker needs to find the pauses. */
export interface Servers {
  readonly sqs: string;
  readonly dynamodb: string;
  /** host:port */
  readonly memcached: string;
  /** The job store's table, which keeps the pauses. */
  readonly table: string;
  /** The workers' lockKeyPrefix: createPauses tells the version under it. */
  readonly prefix: string;
}

/** Only the servers of `s` (what a worker process is given besides its own settings). */
export const serversOf = ({ sqs, dynamodb, memcached, table, prefix }: Servers): Servers => ({ sqs, dynamodb, memcached, table, prefix });

/** The one job type of the bench, a no-op; the workers give it their own handler (worker.ts). */
export const JOB = 'work';
export const workArgs = z.object({ i: z.number() });
/** As the producers send it. */
export const work = defineJob({ name: JOB, args: workArgs, handle: () => {} });
