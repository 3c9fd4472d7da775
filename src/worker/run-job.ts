import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { JobLock } from '../dedupe/lock.js';
import { ATTR_JOB, ATTR_JOB_ID, decodeEnvelope, type Decoded } from '../envelope.js';
import { RetryLaterError, SqsJobsError, UnrecoverableError, toError } from '../errors.js';
import type { JobContext, JobRegistry } from '../job.js';
import { fieldIssues } from '../validation.js';
import { retryDelayMs } from './backoff.js';
import type { DeadLetterReason, DuplicateState, JobInfo, WorkerEvents } from './events.js';
import type { Lease } from './heartbeat.js';
import { attemptOf, firstSentAt, originOf } from './resend.js';
import type { ReceivedMessage } from './sqs-port.js';

/** How one received message ends. settle() turns each into exactly one SQS action. */
export type Outcome =
  | { readonly kind: 'succeeded'; readonly waitMs: number; readonly processMs: number }
  /** Redundant: the job completed, this very message is already in the DLQ, or another message carries the running job. */
  | { readonly kind: 'duplicate'; readonly state: DuplicateState }
  | { readonly kind: 'retry'; readonly error: Error; readonly delayMs: number; readonly processMs: number; readonly abandoned?: boolean }
  | { readonly kind: 'dead-letter'; readonly reason: DeadLetterReason; readonly detail: string; readonly error?: Error; readonly processMs?: number }
  /** Handed back without running (or after an abort): visible again after `delaySeconds`, re-sent when it has no receive left. */
  | { readonly kind: 'release'; readonly reason: string; readonly delaySeconds: number; readonly abandoned?: boolean }
  | { readonly kind: 'lost'; readonly reason: string; readonly abandoned?: boolean };
// `abandoned`: the signal fired and the handler had not settled within the grace period. Its lock
// is then kept until its TTL runs out instead of released, so another worker does not start the
// job beside it at once.

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
  readonly logger: Logger;
  readonly logArgs: boolean;
  readonly emit: <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
}

/** A name from a message, kept only if it is a job this worker registers (metrics dimensions stay bounded). */
function registeredName(jobs: JobRegistry, name: string | undefined): string {
  return name !== undefined && jobs.find(name) !== undefined ? name : 'unknown';
}

function stringAttribute(m: ReceivedMessage, name: string): string | undefined {
  return m.attributes[name]?.StringValue;
}

/** What events say about a message whose body could not be read as a job. */
export function describeUnreadable(jobs: JobRegistry, m: ReceivedMessage): JobInfo {
  return {
    jobId: stringAttribute(m, ATTR_JOB_ID) ?? m.messageId,
    jobName: registeredName(jobs, stringAttribute(m, ATTR_JOB)),
    messageId: m.messageId,
    queueUrl: m.queueUrl,
    attempt: attemptOf(m),
    tenant: undefined,
  };
}

/** What events say about a message: from its envelope when it has one, else from its attributes. */
export function describeMessage(jobs: JobRegistry, m: ReceivedMessage, decoded: Decoded = decodeEnvelope(m.body, { messageId: m.messageId, sentAt: m.sentAt })): JobInfo {
  if (!decoded.ok) return describeUnreadable(jobs, m);
  return { jobId: decoded.envelope.id, jobName: registeredName(jobs, decoded.envelope.job), messageId: m.messageId, queueUrl: m.queueUrl, attempt: attemptOf(m), tenant: decoded.envelope.tenant };
}

/**
 * Decide what happens to one message: read it, claim its job id, run its handler under a signal
 * that fires on timeout, lost lease and shutdown. Never throws. The caller's `controller` is the
 * shutdown switch.
 */
export async function runJob(deps: RunDeps, lease: Lease, controller: AbortController): Promise<{ info: JobInfo; outcome: Outcome }> {
  const m = lease.message;
  const decoded = decodeEnvelope(m.body, { messageId: m.messageId, sentAt: m.sentAt });
  const info = describeMessage(deps.jobs, m, decoded);
  if (!decoded.ok) return { info, outcome: { kind: 'dead-letter', reason: decoded.reason, detail: decoded.detail } };

  const envelope = decoded.envelope;
  const job = deps.jobs.find(envelope.job);
  if (job === undefined) {
    // The name is the sender's word, not a registered job: report it as "unknown" so a stream of
    // made-up names cannot mint metric dimensions; the DLQ detail keeps the name.
    const detail = `no job named "${envelope.job}" is registered in this worker (known: ${deps.jobs.names().join(', ')})`;
    return { info: { ...info, jobName: 'unknown' }, outcome: { kind: 'dead-letter', reason: 'unknown-job', detail } };
  }
  const parsed = job.args.safeParse(envelope.args);
  if (!parsed.success) {
    const detail = fieldIssues(parsed.error, 'args').map((i) => `${i.field}: ${i.rule}`).join('; ');
    return { info, outcome: { kind: 'dead-letter', reason: 'invalid-args', detail } };
  }

  // Wire the abort paths before the first await, so a lease lost while claiming is not missed.
  const log = jobLogger(deps.logger, info);
  lease.onLost = (reason) => {
    log().warn({ reason }, 'lease lost: aborting handler; this worker will not delete the message');
    deps.emit('heartbeat:lost', { ...info, reason });
    controller.abort(new SqsJobsError('LEASE_LOST', `lease lost: ${reason}`));
  };
  lease.onHoldLimit = () =>
    controller.abort(new SqsJobsError('JOB_TIMEOUT', 'the message has been held for nearly 12 hours, the most SQS allows; the attempt is abandoned'));

  const token = randomUUID();
  let claim;
  try {
    claim = await deps.lock.claim(envelope.id, token, deps.lockTtlSeconds, { messageId: m.messageId, originId: originOf(m), receiveCount: m.receiveCount });
  } catch {
    claim = 'unavailable' as const; // a JobLock should not throw; an error is "unknown", never "taken"
  }
  if (claim === 'claimed') lease.lock = { jobId: envelope.id, token };
  if (lease.lost) return { info, outcome: { kind: 'lost', reason: 'the lease was lost while the job id was being claimed' } };
  if (claim === 'completed' || claim === 'dead-lettered') return { info, outcome: { kind: 'duplicate', state: claim } };
  // Another message carries the running job: it retries, or comes back if its worker dies, so this
  // copy adds nothing and is deleted rather than deferred (each deferral would spend a receive).
  if (claim === 'running-copy') return { info, outcome: { kind: 'duplicate', state: 'running' } };
  if (claim === 'running') {
    const reason = 'the job id is running elsewhere under this same message (a redelivery): handed back for one visibility timeout';
    return { info, outcome: { kind: 'release', reason, delaySeconds: deps.visibilityTimeoutSeconds } };
  }
  if (claim === 'unavailable') deps.emit('job:lock-unavailable', info);
  if (claim === 'unavailable' && deps.lockFailClosed) {
    return { info, outcome: { kind: 'release', reason: 'dedupe lock unavailable (failing closed)', delaySeconds: deps.visibilityTimeoutSeconds } };
  }
  if (controller.signal.aborted) return { info, outcome: { kind: 'release', reason: 'worker is stopping', delaySeconds: 0 } };

  const timeout =
    job.timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(new SqsJobsError('JOB_TIMEOUT', `job "${job.name}" timed out after ${job.timeoutMs} ms`)), job.timeoutMs);

  const ctx: JobContext = {
    jobId: envelope.id,
    jobName: job.name,
    messageId: m.messageId,
    attempt: info.attempt,
    signal: controller.signal,
    get log() {
      return log();
    },
    tenant: envelope.tenant,
    enqueuedAt: new Date(envelope.enqueuedAt),
    queueUrl: m.queueUrl,
  };
  const startedAt = Date.now();
  const waitMs = Math.max(0, startedAt - firstSentAt(m).getTime());
  deps.emit('job:start', { ...info, waitMs });
  if (deps.logger.isLevelEnabled('debug')) log().debug(deps.logArgs ? { args: parsed.data, waitMs } : { waitMs }, 'job started');
  const handler = settled(Promise.resolve().then(() => job.handle(parsed.data, ctx)));
  try {
    await untilAborted(handler.promise, controller.signal);
    return { info, outcome: { kind: 'succeeded', waitMs, processMs: Date.now() - startedAt } };
  } catch (thrown) {
    const signalled = controller.signal.aborted;
    // The signal fired: the outcome follows its reason (timeout, shutdown, lost lease) whatever the
    // handler returns now. A handler that honours it settles within the grace period and is not
    // abandoned: its lock is released, so the retry or the released message can run at once.
    if (signalled && handler.state === 'pending') await within(handler.promise, deps.abortGraceMs);
    const processMs = Date.now() - startedAt;
    const abandoned = handler.state === 'pending';
    if (abandoned) {
      handler.promise.catch(() => {}); // its late result has nowhere to go
      log().warn({ graceMs: deps.abortGraceMs }, 'the handler did not settle after its signal fired: it is abandoned, its lock kept until the TTL ends');
    }
    const error = toError(signalled ? controller.signal.reason : thrown);
    if (error instanceof SqsJobsError && error.code === 'LEASE_LOST') return { info, outcome: { kind: 'lost', reason: error.message, abandoned } };
    if (error instanceof SqsJobsError && error.code === 'SHUTDOWN') return { info, outcome: { kind: 'release', reason: error.message, delaySeconds: 0, abandoned } };
    if (error instanceof UnrecoverableError) return { info, outcome: { kind: 'dead-letter', reason: 'unrecoverable', detail: error.message, error, processMs } };
    if (error instanceof RetryLaterError) return { info, outcome: { kind: 'retry', error, delayMs: error.delayMs, processMs, abandoned } };
    if (deps.maxReceiveCount !== undefined && m.receiveCount >= deps.maxReceiveCount) {
      const attempt = info.attempt === m.receiveCount ? `${m.receiveCount} of ${deps.maxReceiveCount}` : `${info.attempt} (receive ${m.receiveCount} of ${deps.maxReceiveCount} after a re-send)`;
      const detail = `failed on attempt ${attempt}: ${error.name}: ${error.message}`;
      return { info, outcome: { kind: 'dead-letter', reason: 'retries-exhausted', detail, error, processMs } };
    }
    return { info, outcome: { kind: 'retry', error, delayMs: retryDelayMs(job.backoff, info.attempt), processMs, abandoned } };
  } finally {
    if (timeout !== undefined) clearTimeout(timeout);
  }
}

/**
 * A child logger bound to the job, made on first use: most jobs log nothing, and a pino child per
 * message would cost memory for as long as the job runs, and CPU.
 */
export function jobLogger(logger: Logger, info: JobInfo): () => Logger {
  let child: Logger | undefined;
  return () => (child ??= logger.child({ jobId: info.jobId, job: info.jobName, messageId: info.messageId, attempt: info.attempt }));
}

/** A promise whose state can be read synchronously. */
function settled<T>(promise: Promise<T>): { readonly promise: Promise<T>; readonly state: 'pending' | 'resolved' | 'rejected' } {
  const tracked = { promise, state: 'pending' as 'pending' | 'resolved' | 'rejected' };
  promise.then(
    () => void (tracked.state = 'resolved'),
    () => void (tracked.state = 'rejected'),
  );
  return tracked;
}

/** Wait for `work` to settle, but no longer than `ms`; never rejects, leaves no timer behind. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work.then(noop, noop), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function noop(): void {}

/** Settle with the handler's result, or reject with the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
