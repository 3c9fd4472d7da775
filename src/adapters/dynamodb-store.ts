import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClient } from './aws-clients.js';
import type { AwsSettings, Env } from '../config/env.js';
import type { JobStore } from '../ports/job-store.js';
import { type JobStatus, type ProgressUpdate, smallJson, type Transition } from '../ports/status-store.js';
import type { ChildCount, ChildEnd, CompletionSpec, FanOutStatus } from '../ports/fan-out-store.js';
import { ChildCounts } from './dynamodb-child-counts.js';
import * as fanOut from './dynamodb-fan-out.js';
import { DynamoSchedules } from './dynamodb-schedules.js';
import { DynamoTimedJobs } from './dynamodb-timed.js';
import { DynamoControls } from './dynamodb-controls.js';
import { DynamoEnqueueKeys } from './dynamodb-keys.js';
import { DynamoJobList } from './dynamodb-job-list.js';
import { Transitions } from './dynamodb-transitions.js';
import { jobKey, N, readItem, S, type TableRef, toStatus, Update, updateIf } from './dynamodb-items.js';

export { createJobTable } from './dynamodb-table.js';

/**
 * How the store's calls ride out a slow or briefly unreachable DynamoDB (throttling, a network blip,
 * DynamoDB Local's first seconds on a loaded host): each attempt may take 10 s, and a timed-out,
 * dropped or throttled call is tried up to 6 times with the SDK's backoff. A worker holds the
 * message (visibility extended) while its bookkeeping waits, so a slow answer costs time, not a
 * receive; a call that still fails hands the message back to be counted later.
 */
const STORE_CLIENT = { maxSockets: 50, requestTimeoutMs: 10_000, maxAttempts: 6 } as const;

/** A DynamoJobStore with its own client (closed with the store). */
export function createDynamoJobStore(aws: AwsSettings, table: string, ttlSeconds: number, env: Env): DynamoJobStore {
  return new DynamoJobStore({
    client: createDynamoClient(aws, STORE_CLIENT, env),
    table,
    ttlSeconds,
    ownsClient: true,
  });
}

interface DynamoJobStoreOptions {
  readonly client: DynamoDBClient;
  readonly table: string;
  /** How long records and child markers live after their last write (the table's TTL attribute `expiresAt`). */
  readonly ttlSeconds: number;
  /** Close the client on close() (when the store made it). */
  readonly ownsClient?: boolean;
}

/**
 * The job store on DynamoDB: one on-demand table, partition key `pk` (string), TTL attribute
 * `expiresAt`. A job's record is `job#<job id>`; a fan-out child's counted end is
 * `child#<parent id>#<child id>`. Order and idempotence are in the condition expressions:
 * - transition: applies when nothing is stored, or the stored state is not `completed` and the new
 *   one is `completed`, or later by (attempt, rank); changes made together share a call
 *   (dynamodb-transitions.ts);
 * - progress: only while not `completed`, and `done` never goes down;
 * - childEnded: the marker put and the parent's counters in one transaction, so a child counts once
 *   (children of one parent that end together share one: dynamodb-child-counts.ts);
 *   the completion is claimed with a conditional write (done = total, not sent, not claimed or
 *   claimed by a claimer presumed dead).
 */
export class DynamoJobStore implements JobStore {
  readonly #o: DynamoJobStoreOptions;
  readonly #t: TableRef;
  readonly #counts: ChildCounts;
  readonly #transitions: Transitions;
  /** Schedules, in the same table (dynamodb-schedules.ts): kept without a TTL. */
  readonly schedules: DynamoSchedules;
  /** Jobs kept until their time, in the same table (dynamodb-timed.ts). */
  readonly timed: DynamoTimedJobs;
  /** The control state (pauses), in the same table (dynamodb-controls.ts): kept without a TTL. */
  readonly controls: DynamoControls;
  /** The jobs list, on the table's list indexes (dynamodb-job-list.ts). */
  readonly jobs: DynamoJobList;
  /** Keys on enqueue (singleton, throttle, debounce), in the same table (dynamodb-keys.ts). */
  readonly keys: DynamoEnqueueKeys;

  constructor(options: DynamoJobStoreOptions) {
    this.#o = options;
    this.#t = { client: options.client, table: options.table, expiresAt: () => Math.floor(Date.now() / 1000) + options.ttlSeconds };
    this.#counts = new ChildCounts(this.#t);
    this.#transitions = new Transitions(this.#t);
    this.schedules = new DynamoSchedules(this.#t);
    this.timed = new DynamoTimedJobs(this.#t);
    this.controls = new DynamoControls(this.#t);
    this.keys = new DynamoEnqueueKeys(this.#t);
    this.jobs = new DynamoJobList(this.#t);
  }

  transition(t: Transition): Promise<'applied' | 'stale'> {
    return this.#transitions.apply(t);
  }

  async progress(jobId: string, p: ProgressUpdate): Promise<void> {
    const u = new Update();
    u.set('updatedAt', S(new Date().toISOString()));
    if (p.done !== undefined) u.set('progressDone', N(p.done));
    if (p.add !== undefined && p.add !== 0) u.add('progressDone', p.add);
    if (p.total !== undefined) u.set('progressTotal', N(p.total));
    const data = smallJson(p.data);
    if (data !== undefined) u.set('data', S(data));
    const state = u.name('state');
    const completed = u.value(S('completed'));
    const conditions = [`${state} <> ${completed}`];
    if (p.done !== undefined) {
      const done = u.name('progressDone');
      conditions.push(`(attribute_not_exists(${done}) OR ${done} <= ${u.value(N(p.done))})`);
    }
    // Refused when completed already, not recorded yet, or a later progress is stored: nothing to change.
    await updateIf(this.#t, jobKey(jobId), u, conditions.join(' AND '));
  }

  async get(jobId: string): Promise<JobStatus | undefined> {
    const item = await readItem(this.#t, jobKey(jobId));
    return item === undefined ? undefined : toStatus(item);
  }

  openFanOut(parentId: string, jobName: string, total: number, completion: CompletionSpec | undefined): Promise<FanOutStatus> {
    return fanOut.openFanOut(this.#t, parentId, jobName, total, completion);
  }

  fanOutSent(parentId: string, sent: number): Promise<void> {
    return fanOut.fanOutSent(this.#t, parentId, sent);
  }

  childEnded(end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount> {
    return fanOut.childEnded(this.#t, this.#counts, end, claimToken, reclaimAfterMs);
  }

  claimEmptyCompletion(parentId: string, claimToken: string, reclaimAfterMs: number): Promise<CompletionSpec | undefined> {
    return fanOut.claimEmptyCompletion(this.#t, parentId, claimToken, reclaimAfterMs);
  }

  completionSent(parentId: string): Promise<void> {
    return fanOut.completionSent(this.#t, parentId);
  }

  /** Destroys the DynamoDB client if the store owns it (`ownsClient`); see JobStore.close. */
  close(): void {
    if (this.#o.ownsClient) this.#o.client.destroy();
  }
}
