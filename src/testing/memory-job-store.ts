import type { ChildCount, ChildEnd, CompletionSpec, FanOutStatus } from '../ports/fan-out-store.js';
import type { JobStore } from '../ports/job-store.js';
import { MemorySchedules } from './memory-schedules.js';
import { MemoryTimedJobs } from './memory-timed.js';
import { MemoryControls } from './memory-controls.js';
import { MemoryEnqueueKeys } from './memory-keys.js';
import { MemoryJobList } from './memory-job-list.js';
import { listSaid } from '../ports/job-list.js';
import {
  ENDED_STATES,
  isLater,
  type JobState,
  type JobStatus,
  MAX_ERROR_CHARS,
  type ProgressUpdate,
  smallJson,
  type Transition,
  viewOf,
} from '../ports/status-store.js';

/** A job's record as this store keeps it: what DynamoDB's item holds, in plain fields. */
interface JobRecord {
  jobId: string;
  jobName: string;
  state?: JobState;
  attempt?: number;
  updatedAt: string;
  enqueuedAt?: string;
  startedAt?: string;
  finishedAt?: string;
  worker?: string;
  error?: string;
  reason?: string;
  nextAttemptAt?: string;
  result?: string;
  data?: string;
  parentId?: string;
  tenant?: string;
  /** The jobs list's: when the state last changed (epoch ms), and the tenant that change gave. */
  listedAtMs?: number;
  listTenant?: string;
  listSaid?: string;
  progressDone?: number;
  progressTotal?: number;
  fan?: { total: number; sent: number; succeeded: number; failed: number; completionSent: boolean; completion?: CompletionSpec };
  claim?: { token: string; at: number };
}

/**
 * The job store in memory (status and fan-out counters), for tests and single-process tools:
 * `createWorker({ store: new MemoryJobStore(), ... })` and `getJob(id, store)` on the same
 * instance. It keeps the same order and idempotence rules as DynamoDB's and passes the same
 * contract tests (test/contracts/status-store-port.test.ts, fan-out-store-port.test.ts); it is not
 * durable and has no TTL. `down = true` makes every call fail, as an unreachable store does.
 */
export class MemoryJobStore implements JobStore {
  readonly #jobs = new Map<string, JobRecord>();
  /** Counted children: `<parent id>#<child id>`. */
  readonly #children = new Set<string>();
  /** Schedules, kept as DynamoDB's are (memory-schedules.ts). */
  readonly schedules = new MemorySchedules();
  /** Jobs kept until their time (memory-timed.ts). */
  readonly timed = new MemoryTimedJobs();
  /** Pauses (memory-controls.ts). */
  readonly controls = new MemoryControls();
  /** Keys on enqueue (memory-keys.ts), beside the kept jobs their bursts are. */
  readonly keys = new MemoryEnqueueKeys(this.timed);
  /** The jobs list over these records (memory-job-list.ts). */
  readonly jobs = new MemoryJobList(() => {
    this.#check();
    return this.#jobs.values();
  });
  down = false;

  async transition(t: Transition): Promise<'applied' | 'stale'> {
    this.#check();
    const stored = this.#jobs.get(t.jobId);
    const current = stored?.state === undefined ? undefined : { state: stored.state, attempt: stored.attempt ?? 0 };
    if (!isLater(t, current)) return 'stale';
    const at = t.at.toISOString();
    const r: JobRecord = stored ?? { jobId: t.jobId, jobName: t.jobName, updatedAt: at };
    Object.assign(r, { jobId: t.jobId, jobName: t.jobName, state: t.state, attempt: t.attempt, updatedAt: at });
    r.enqueuedAt ??= t.enqueuedAt;
    r.parentId ??= t.parentId;
    r.tenant ??= t.tenant;
    r.listedAtMs = t.at.getTime();
    r.listTenant = t.tenant;
    r.listSaid = listSaid(t.state, t.error, t.reason);
    if (t.worker !== undefined) r.worker = t.worker;
    if (t.error !== undefined) r.error = t.error.slice(0, MAX_ERROR_CHARS);
    if (t.reason !== undefined) r.reason = t.reason;
    if (t.nextAttemptAt !== undefined) r.nextAttemptAt = t.nextAttemptAt.toISOString();
    if (t.state === 'running') r.startedAt = (t.startedAt ?? t.at).toISOString();
    else if (t.startedAt !== undefined && t.state !== 'waiting') r.startedAt = t.startedAt.toISOString();
    if (ENDED_STATES.has(t.state)) r.finishedAt = at;
    const result = smallJson(t.result);
    if (result !== undefined) r.result = result;
    this.#jobs.set(t.jobId, r);
    return 'applied';
  }

  async progress(jobId: string, p: ProgressUpdate): Promise<void> {
    this.#check();
    const r = this.#jobs.get(jobId);
    // Refused when not recorded yet, completed already, or a later progress is stored.
    if (r?.state === undefined || r.state === 'completed') return;
    if (p.done !== undefined && r.progressDone !== undefined && r.progressDone > p.done) return;
    r.updatedAt = new Date().toISOString();
    if (p.done !== undefined) r.progressDone = p.done;
    if (p.add !== undefined && p.add !== 0) r.progressDone = (r.progressDone ?? 0) + p.add;
    if (p.total !== undefined) r.progressTotal = p.total;
    const data = smallJson(p.data);
    if (data !== undefined) r.data = data;
  }

  async get(jobId: string): Promise<JobStatus | undefined> {
    this.#check();
    const r = this.#jobs.get(jobId);
    if (r === undefined) return undefined;
    const fanOut = r.fan === undefined ? undefined : statusOf(r.fan);
    const own =
      r.progressDone === undefined && r.progressTotal === undefined
        ? undefined
        : { done: r.progressDone ?? 0, ...(r.progressTotal === undefined ? {} : { total: r.progressTotal }) };
    const view = viewOf(r.state, own, fanOut, r.nextAttemptAt);
    const optional = {
      enqueuedAt: r.enqueuedAt,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
      worker: r.worker,
      error: r.error,
      reason: r.reason,
      nextAttemptAt: r.nextAttemptAt,
      result: r.result === undefined ? undefined : JSON.parse(r.result),
      data: r.data === undefined ? undefined : JSON.parse(r.data),
      parentId: r.parentId,
      tenant: r.tenant,
      progress: view.progress,
      fanOut,
    };
    return {
      jobId: r.jobId,
      jobName: r.jobName,
      state: view.state,
      attempt: r.attempt ?? 0,
      updatedAt: r.updatedAt,
      ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
    };
  }

  async openFanOut(parentId: string, jobName: string, total: number, completion: CompletionSpec | undefined): Promise<FanOutStatus> {
    this.#check();
    const r = this.#jobs.get(parentId) ?? { jobId: parentId, jobName, updatedAt: '' };
    r.updatedAt = new Date().toISOString();
    r.fan ??= { total, sent: 0, succeeded: 0, failed: 0, completionSent: false };
    // Kept as JSON, as DynamoDB keeps it; set once, by the first open that gives one.
    if (completion !== undefined) r.fan.completion ??= JSON.parse(JSON.stringify(completion)) as CompletionSpec;
    this.#jobs.set(parentId, r);
    if (r.fan.total !== total) {
      throw new Error(`fan-out ${parentId} was opened with ${r.fan.total} children; it cannot be resumed with ${total}`);
    }
    return statusOf(r.fan);
  }

  async fanOutSent(parentId: string, sent: number): Promise<void> {
    this.#check();
    const fan = this.#jobs.get(parentId)?.fan;
    if (fan !== undefined && fan.sent < sent) fan.sent = sent;
  }

  async childEnded(end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount> {
    this.#check();
    const parent = this.#jobs.get(end.parentId);
    const fan = parent?.fan;
    if (parent === undefined || fan === undefined) return { kind: 'no-fan-out' };
    const marker = `${end.parentId}#${end.childId}`;
    if (!this.#children.has(marker)) {
      this.#children.add(marker);
      if (end.succeeded) fan.succeeded++;
      else fan.failed++;
    }
    const status = statusOf(fan);
    if (fan.completionSent || fan.succeeded + fan.failed < fan.total) return { kind: 'counted', status, completion: undefined };
    if (claim(parent, claimToken, reclaimAfterMs)) return { kind: 'counted', status, completion: completionOf(fan) };
    return { kind: 'completion-pending', status };
  }

  async claimEmptyCompletion(parentId: string, claimToken: string, reclaimAfterMs: number): Promise<CompletionSpec | undefined> {
    this.#check();
    const parent = this.#jobs.get(parentId);
    if (parent?.fan === undefined || !claim(parent, claimToken, reclaimAfterMs)) return undefined;
    return completionOf(parent.fan);
  }

  async completionSent(parentId: string): Promise<void> {
    this.#check();
    const r = this.#jobs.get(parentId);
    if (r?.fan === undefined) return;
    r.fan.completionSent = true;
    r.updatedAt = new Date().toISOString();
  }

  /** Does nothing: the records stay readable. */
  close(): void {}

  #check(): void {
    if (this.down) throw new Error('MemoryJobStore is down');
  }
}

function statusOf(fan: NonNullable<JobRecord['fan']>): FanOutStatus {
  return { total: fan.total, sent: fan.sent, succeeded: fan.succeeded, failed: fan.failed, completionSent: fan.completionSent };
}

/** A fan-out with no completion job answers a spec with job '' (nothing to send). */
function completionOf(fan: NonNullable<JobRecord['fan']>): CompletionSpec {
  return fan.completion ?? { job: '', queueUrl: '' };
}

/** The completion's claim: the set is complete and unsent, and unclaimed, claimed with this token, or claimed over `reclaimAfterMs` ago. */
function claim(parent: JobRecord, token: string, reclaimAfterMs: number): boolean {
  const fan = parent.fan;
  const now = Date.now();
  if (fan === undefined || fan.succeeded + fan.failed < fan.total || fan.completionSent) return false;
  const c = parent.claim;
  if (c !== undefined && c.token !== token && c.at >= now - reclaimAfterMs) return false;
  parent.claim = { token, at: now };
  return true;
}
