import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { JobLock } from '../dedupe/lock.js';
import { ATTR_JOB, ATTR_JOB_ID, decodeEnvelope } from '../envelope.js';
import { RetryLaterError, SqsJobsError, UnrecoverableError, toError } from '../errors.js';
import type { JobContext, JobRegistry } from '../job.js';
import { fieldIssues } from '../validation.js';
import { retryDelayMs } from './backoff.js';
import type { DeadLetterReason, JobInfo, WorkerEvents } from './events.js';
import type { Lease } from './heartbeat.js';

/** How one received message ends. settle() turns each into exactly one SQS action. */
export type Outcome =
  | { readonly kind: 'succeeded'; readonly waitMs: number; readonly processMs: number }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'busy' }
  | { readonly kind: 'retry'; readonly error: Error; readonly delayMs: number; readonly processMs: number; readonly abandoned?: boolean }
  | { readonly kind: 'dead-letter'; readonly reason: DeadLetterReason; readonly detail: string; readonly error?: Error; readonly processMs?: number }
  | { readonly kind: 'release'; readonly reason: string; readonly delaySeconds: number; readonly abandoned?: boolean }
  | { readonly kind: 'lost'; readonly reason: string };
// `abandoned`: the signal fired and the handler has not returned. Its lock is then kept until its
// TTL runs out instead of released, so another worker does not start the job beside it at once.

export interface RunDeps {
  readonly jobs: JobRegistry;
  readonly lock: JobLock;
  readonly lockTtlSeconds: number;
  readonly lockFailClosed: boolean;
  readonly visibilityTimeoutSeconds: number;
  /** From the queue's RedrivePolicy: the attempt after which SQS would dead-letter the message anyway. */
  readonly maxReceiveCount: number | undefined;
  readonly logger: Logger;
  readonly logArgs: boolean;
  readonly emit: <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
}

/** A name from a message, kept only if it is a job this worker registers (metrics dimensions stay bounded). */
function registeredName(jobs: JobRegistry, name: string | undefined): string {
  return name !== undefined && jobs.find(name) !== undefined ? name : 'unknown';
}

function stringAttribute(lease: Lease, name: string): string | undefined {
  return lease.message.attributes[name]?.StringValue;
}

/**
 * Decide what happens to one message: read it, claim its job id, run its handler under a signal
 * that fires on timeout, lost lease and shutdown. Never throws. The caller's `controller` is the
 * shutdown switch.
 */
export async function runJob(deps: RunDeps, lease: Lease, controller: AbortController): Promise<{ info: JobInfo; outcome: Outcome }> {
  const m = lease.message;
  const decoded = decodeEnvelope(m.body, { messageId: m.messageId, sentAt: m.sentAt });
  const info: JobInfo = {
    jobId: decoded.ok ? decoded.envelope.id : (stringAttribute(lease, ATTR_JOB_ID) ?? m.messageId),
    jobName: decoded.ok ? decoded.envelope.job : registeredName(deps.jobs, stringAttribute(lease, ATTR_JOB)),
    messageId: m.messageId,
    queueUrl: m.queueUrl,
    attempt: m.receiveCount,
    tenant: decoded.ok ? decoded.envelope.tenant : undefined,
  };
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
    claim = await deps.lock.claim(envelope.id, token, deps.lockTtlSeconds);
  } catch {
    claim = 'unavailable' as const; // a JobLock should not throw; an error is "unknown", never "taken"
  }
  if (claim === 'claimed') lease.lock = { jobId: envelope.id, token };
  if (lease.lost) return { info, outcome: { kind: 'lost', reason: 'the lease was lost while the job id was being claimed' } };
  if (claim === 'completed') return { info, outcome: { kind: 'duplicate' } };
  if (claim === 'running') return { info, outcome: { kind: 'busy' } };
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
    attempt: m.receiveCount,
    signal: controller.signal,
    get log() {
      return log();
    },
    tenant: envelope.tenant,
    enqueuedAt: new Date(envelope.enqueuedAt),
    queueUrl: m.queueUrl,
  };
  const startedAt = Date.now();
  const waitMs = Math.max(0, startedAt - m.sentAt.getTime());
  deps.emit('job:start', { ...info, waitMs });
  if (deps.logger.isLevelEnabled('debug')) log().debug(deps.logArgs ? { args: parsed.data, waitMs } : { waitMs }, 'job started');
  let handlerDone = false;
  const handler = Promise.resolve()
    .then(() => job.handle(parsed.data, ctx))
    .finally(() => {
      handlerDone = true;
    });
  try {
    await untilAborted(handler, controller.signal);
    return { info, outcome: { kind: 'succeeded', waitMs, processMs: Date.now() - startedAt } };
  } catch (thrown) {
    const processMs = Date.now() - startedAt;
    const abandoned = !handlerDone;
    if (abandoned) {
      handler.catch(() => {}); // its late result has nowhere to go
      log().warn('the signal fired and the handler has not returned: it is abandoned, its lock kept until the TTL ends');
    }
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : thrown;
    const error = toError(reason);
    if (error instanceof SqsJobsError && error.code === 'LEASE_LOST') return { info, outcome: { kind: 'lost', reason: error.message } };
    if (error instanceof SqsJobsError && error.code === 'SHUTDOWN') return { info, outcome: { kind: 'release', reason: error.message, delaySeconds: 0, abandoned } };
    if (error instanceof UnrecoverableError) return { info, outcome: { kind: 'dead-letter', reason: 'unrecoverable', detail: error.message, error, processMs } };
    if (deps.maxReceiveCount !== undefined && m.receiveCount >= deps.maxReceiveCount && !(error instanceof RetryLaterError)) {
      const detail = `failed on attempt ${m.receiveCount} of ${deps.maxReceiveCount}: ${error.name}: ${error.message}`;
      return { info, outcome: { kind: 'dead-letter', reason: 'retries-exhausted', detail, error, processMs } };
    }
    const delayMs = error instanceof RetryLaterError ? error.delayMs : retryDelayMs(job.backoff, m.receiveCount);
    return { info, outcome: { kind: 'retry', error, delayMs, processMs, abandoned } };
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
