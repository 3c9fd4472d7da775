import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { jobLogger } from './job-logger.js';
import { ATTR_JOB, ATTR_JOB_ID, decodeEnvelope, type Envelope, type PoisonReason } from '../../envelope.js';
import type { AnyDefinition, AnyJob, JobContext, JobRegistry } from '../../job.js';
import type { JobInfo, WorkerEvents } from '../../job-events.js';
import type { ClaimResult, ConcurrencySlots, JobLock } from '../../ports/lock.js';
import type { ReceivedMessage } from '../../ports/queue.js';
import { fieldIssues } from '../../validation.js';
import { afterClaim, afterRun, afterSlot, type Outcome } from '../fate/decide.js';
import { execute } from './execute.js';
import { SqsJobsError } from '../../errors.js';
import { type FanOutDeps, fanOut } from '../../status/fan-out.js';
import { NO_PROGRESS } from '../../status/progress.js';
import { type StatusTracker, trackingOf } from '../../status/tracker.js';
import type { Lease } from '../hold/lease.js';
import { attemptOf, firstSentAt, isDeadLetteredCopy, originOf } from '../fate/resend.js';
import { isFifoQueue } from '../../queue-url.js';

export interface RunDeps {
  readonly jobs: JobRegistry;
  readonly lock: JobLock;
  readonly lockTtlSeconds: number;
  readonly lockFailClosed: boolean;
  readonly visibilityTimeoutSeconds: number;
  /** How long a handler may take to settle after its signal fires before it is abandoned. */
  readonly abortGraceMs: number;
  /** From the queue's RedrivePolicy: the receive after which SQS would dead-letter the message anyway. */
  readonly maxReceiveCount: number | undefined;
  readonly stopping: () => boolean;
  /** Tenant fairness caps (fleet-wide, via `slots`), and how long a job over its cap waits. */
  readonly caps: Readonly<Record<string, number>>;
  readonly capDelaySeconds: number;
  readonly slots: ConcurrencySlots | undefined;
  readonly logger: Logger;
  readonly logArgs: boolean;
  readonly emit: <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
  /** Job status and fan-out, when a job store is configured. */
  readonly status: { readonly tracker: StatusTracker; readonly fanOut: FanOutDeps } | undefined;
}

/** What reading a message gave: a registered job with valid args, or poison. */
export type Reading =
  | { readonly ok: true; readonly envelope: Envelope; readonly job: AnyDefinition; readonly args: unknown; readonly info: JobInfo }
  /** `envelope`: when the body was an envelope (an unknown job, invalid args): a fan-out child's end is still counted. */
  | { readonly ok: false; readonly reason: PoisonReason; readonly detail: string; readonly info: JobInfo; readonly envelope?: Envelope };
export type GoodReading = Extract<Reading, { ok: true }>;

/** A name from a message, kept only if it is a job this worker registers (metrics dimensions stay bounded). */
function registeredName(jobs: JobRegistry, name: string | undefined): string {
  return name !== undefined && jobs.find(name) !== undefined ? name : 'unknown';
}

/** What events say about a message: from its envelope when it has one, else from its attributes. */
export function describeMessage(jobs: JobRegistry, m: ReceivedMessage): JobInfo {
  return readMessage(jobs, m).info;
}

export function readMessage(jobs: JobRegistry, m: ReceivedMessage): Reading {
  const decoded = decodeEnvelope(m.body, { messageId: m.messageId, sentAt: m.sentAt });
  if (!decoded.ok) {
    const info = {
      jobId: m.attributes[ATTR_JOB_ID]?.StringValue ?? m.messageId,
      jobName: registeredName(jobs, m.attributes[ATTR_JOB]?.StringValue),
      messageId: m.messageId,
      queueUrl: m.queueUrl,
      attempt: attemptOf(m),
      tenant: undefined,
    };
    return { ok: false, reason: decoded.reason, detail: decoded.detail, info };
  }
  const envelope = decoded.envelope;
  const job = jobs.find(envelope.job);
  const info = {
    jobId: envelope.id,
    jobName: registeredName(jobs, envelope.job),
    messageId: m.messageId,
    queueUrl: m.queueUrl,
    attempt: attemptOf(m),
    tenant: envelope.tenant,
  };
  if (job === undefined) {
    // The name is the sender's word, not a registered job: events say "unknown" so a stream of
    // made-up names cannot mint metric dimensions; the DLQ detail keeps the name.
    return {
      ok: false,
      envelope,
      reason: 'unknown-job',
      detail: `no job named "${envelope.job}" is registered in this worker (known: ${jobs.names().join(', ')})`,
      info,
    };
  }
  const parsed = job.args.safeParse(envelope.args);
  if (!parsed.success)
    return {
      ok: false,
      envelope,
      reason: 'invalid-args',
      detail: fieldIssues(parsed.error, 'args')
        .map((i) => `${i.field}: ${i.rule}`)
        .join('; '),
      info,
    };
  return { ok: true, envelope, job, args: parsed.data, info };
}

/**
 * One message from receive to outcome: claim its job id, run its handler under the lease's
 * signal, and decide (decide.ts). `read` is the message as readMessage() read it. Never throws.
 */
export async function runJob(deps: RunDeps, lease: Lease, read: Reading): Promise<{ info: JobInfo; outcome: Outcome }> {
  const m = lease.message;
  // A FIFO job retried here (lease.retries) was not received again: count those runs too.
  const info = lease.retries === 0 ? read.info : { ...read.info, attempt: read.info.attempt + lease.retries };
  lease.info = info;
  if (!read.ok) {
    if (deps.status !== undefined && read.envelope !== undefined) lease.tracking = trackingOf(read.envelope, false, originOf(m));
    return { info, outcome: { kind: 'dead-letter', reason: read.reason, detail: read.detail } };
  }
  if (read.job.kind !== 'sqs-jobs/job') throw new Error(`runJob() was handed the batch job "${read.job.name}"`);
  if (deps.status !== undefined) lease.tracking = trackingOf(read.envelope, read.job.track, originOf(m));

  const token = randomUUID();
  const next = await claimFor(deps, lease, read, token);
  if (next !== 'run') return { info, outcome: next };
  const tenant = read.envelope.tenant;
  // Own properties only: a tenant named "constructor" or "toString" has no cap unless given one.
  const cap = tenant === undefined || isFifoQueue(m.queueUrl) || !Object.hasOwn(deps.caps, tenant) ? undefined : deps.caps[tenant];
  if (tenant !== undefined && cap !== undefined && deps.slots !== undefined) {
    const slot = await deps.slots.take(tenant, cap, token, deps.lockTtlSeconds);
    if (typeof slot === 'number') lease.slot = { key: tenant, index: slot, token };
    if (lease.lost)
      return { info, outcome: { kind: 'lost', reason: 'the lease was lost while a slot of its tenant was taken', abandoned: false } };
    if (deps.stopping()) return { info, outcome: { kind: 'release', reason: 'worker is stopping', delaySeconds: 0, abandoned: false } };
    const capped = afterSlot(slot, tenant, cap, deps.capDelaySeconds);
    if (capped !== 'run') return { info, outcome: capped };
  }
  // Returned, not awaited: this frame (and what it holds) is gone while the handler runs; only
  // the closure below waits, with what the decision needs.
  return start(deps, lease, { ...read, job: read.job }, info);
}

/** Claim the job id of a message read well: 'run' (the lock is the lease's now), or how the message ends instead. */
export async function claimFor(deps: RunDeps, lease: Lease, read: GoodReading, token: string): Promise<Outcome | 'run'> {
  // A copy re-sent only to be counted in its fan-out: its job is in the DLQ already.
  if (isDeadLetteredCopy(lease.message)) return { kind: 'duplicate', state: 'dead-lettered' };
  const claim = await claimJob(deps.lock, read.envelope.id, token, deps.lockTtlSeconds, lease.message);
  if (claim === 'claimed') lease.lock = { jobId: read.envelope.id, token };
  if (claim === 'unavailable') deps.emit('job:lock-unavailable', lease.info ?? read.info);
  return afterClaim({
    claim,
    leaseLost: lease.lost,
    lockFailClosed: deps.lockFailClosed,
    stopping: deps.stopping(),
    visibilityTimeoutSeconds: deps.visibilityTimeoutSeconds,
  });
}

/** Start the handler; the promise answers the outcome once it has ended. */
function start(
  deps: RunDeps,
  lease: Lease,
  read: GoodReading & { readonly job: AnyJob },
  info: JobInfo,
): Promise<{ info: JobInfo; outcome: Outcome }> {
  const m = lease.message;
  const job = read.job;
  const log = jobLogger(deps.logger, info);
  const status = deps.status;
  const tracking = lease.tracking;
  if (status !== undefined && tracking !== undefined) status.tracker.running(info, tracking);
  if (status !== undefined && tracking?.tracked) lease.progress = status.tracker.progress(info, tracking);
  const ctx: JobContext = {
    jobId: read.envelope.id,
    jobName: job.name,
    messageId: m.messageId,
    attempt: info.attempt,
    signal: lease.signal,
    get log() {
      return log();
    },
    tenant: read.envelope.tenant,
    enqueuedAt: new Date(read.envelope.enqueuedAt),
    queueUrl: m.queueUrl,
    progress: lease.progress?.fn ?? NO_PROGRESS,
    fanOut: (child, argsList, options) => {
      if (status === undefined) {
        return Promise.reject(
          new SqsJobsError('CONFIG_INVALID', 'ctx.fanOut needs a job store: set the worker option store ({ table }) or SQS_JOBS_JOB_TABLE'),
        );
      }
      return fanOut(
        status.fanOut,
        { jobId: read.envelope.id, jobName: job.name, queueUrl: m.queueUrl, originId: originOf(m), signal: lease.signal },
        child,
        argsList,
        options,
      );
    },
  };
  const waitMs = Math.max(0, Date.now() - firstSentAt(m).getTime());
  deps.emit('job:start', { ...info, waitMs });
  if (deps.logger.isLevelEnabled('debug')) log().debug(deps.logArgs ? { args: read.args, waitMs } : { waitMs }, 'job started');
  const receiveCount = m.receiveCount + lease.retries;
  const args = read.args;
  return execute(() => job.handle(args, ctx), lease, {
    timeoutMs: job.timeoutMs,
    timeoutMessage: `job "${job.name}" timed out after ${job.timeoutMs} ms`,
    graceMs: deps.abortGraceMs,
  }).then((execution) => {
    if (execution.kind === 'aborted' && execution.abandoned) {
      log().warn(
        { graceMs: deps.abortGraceMs },
        'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends',
      );
    }
    const outcome = afterRun({
      execution,
      receiveCount,
      attempt: info.attempt,
      maxReceiveCount: deps.maxReceiveCount,
      backoff: job.backoff,
      waitMs,
    });
    return { info, outcome };
  });
}

async function claimJob(lock: JobLock, jobId: string, token: string, ttlSeconds: number, m: ReceivedMessage): Promise<ClaimResult> {
  try {
    return await lock.claim(jobId, token, ttlSeconds, { messageId: m.messageId, originId: originOf(m), receiveCount: m.receiveCount });
  } catch {
    return 'unavailable'; // a JobLock should not throw; an error is "unknown", never "taken"
  }
}
