import type { FanOutStore } from './fan-out-store.js';
import type { ScheduleStore } from './schedule-store.js';
import type { TimedJobStore } from './timed-jobs.js';
import type { StatusStore } from './status-store.js';
import type { ControlStore } from './control-store.js';
import type { JobList } from './job-list.js';
import type { EnqueueKeys } from './enqueue-keys.js';

/**
 * The job store: the status store and the fan-out store in one durable place (a fan-out's counters
 * live on its parent's status record, so that a read shows both). The `store` option of the
 * producer, worker and getJob() takes one; `sqs-jobs/adapters` has DynamoDB's, `sqs-jobs/testing`
 * an in-memory one.
 */
export interface JobStore extends StatusStore, FanOutStore {
  /**
   * Where schedules are kept (defineSchedule, `sqs-jobs schedules`), beside the jobs they send; a
   * store without it refuses schedules with a clear error. DynamoDB's and MemoryJobStore have one,
   * passing test/contracts/schedule-store-port.test.ts.
   */
  readonly schedules?: ScheduleStore;
  /**
   * Where jobs to run beyond SQS's 900 s delay (`runAt`, `delaySeconds`) wait for their time; a
   * store without it refuses them with a clear error. DynamoDB's and MemoryJobStore have one,
   * passing test/contracts/timed-jobs-port.test.ts.
   */
  readonly timed?: TimedJobStore;
  /**
   * Where pauses are kept (`sqs-jobs pause`, pauseJobs()); a store without it refuses them with a
   * clear error. DynamoDB's and MemoryJobStore have one, passing test/contracts/control-store-port.test.ts.
   */
  readonly controls?: ControlStore;
  /**
   * The jobs list (`sqs-jobs jobs list`, the dashboard's Jobs page): tracked jobs by job, state,
   * tenant and time, in pages; a store without it refuses lists with a clear error. DynamoDB's and
   * MemoryJobStore have one, passing test/contracts/job-list-port.test.ts.
   */
  readonly jobs?: JobList;
  /**
   * Keys on enqueue (`singleton`, `throttle`, `debounce`); a store without it refuses them with a
   * clear error. DynamoDB's and MemoryJobStore have one, passing test/contracts/enqueue-keys-port.test.ts.
   */
  readonly keys?: EnqueueKeys;
  /** Free what the store holds (a client it made). sqs-jobs closes only stores it made; one passed as `store` is yours to close. */
  close(): void;
}
