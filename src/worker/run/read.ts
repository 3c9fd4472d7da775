import { ATTR_JOB, ATTR_JOB_ID, decodeEnvelope } from '../../core/envelope.js';
import type { JobRegistry } from '../../core/job-registry.js';
import type { JobInfo } from '../../core/job-events.js';
import type { ReceivedMessage } from '../../core/message.js';
import { fieldIssues } from '../../core/validation.js';
import { attemptOf, firstSentAt, originOf } from '../../core/delivery.js';
import type { Lease } from '../hold/lease.js';
import { eventRoutingFor } from './event-routing.js';
import type { Reading } from '../reading.js';

/** The message of `lease` as read: decoded and validated once, by the first phase that needs it. */
export function readOnce(jobs: JobRegistry, lease: Lease): Reading {
  lease.reading ??= readMessage(jobs, lease.message);
  return lease.reading;
}

/** What events say about a held message: from its envelope when it has one, else from its attributes (its receive's attempt). */
export function describeLease(jobs: JobRegistry, lease: Lease): JobInfo {
  return readOnce(jobs, lease).info;
}

/** A name from a message, kept only if it is a job this worker registers (metrics dimensions stay bounded). */
function registeredName(jobs: JobRegistry, name: string | undefined): string {
  return name !== undefined && jobs.find(name) !== undefined ? name : 'unknown';
}

export function readMessage(jobs: JobRegistry, m: ReceivedMessage): Reading {
  // A body without an id is the job of its first message: the same job id across the copies the worker re-sends.
  const decoded = decodeEnvelope(m.body, { messageId: originOf(m), sentAt: firstSentAt(m) }, eventRoutingFor(jobs, m.queueUrl));
  if (!decoded.ok) {
    const info = {
      jobId: m.attributes[ATTR_JOB_ID]?.StringValue ?? originOf(m),
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
  // An event's payload made into the args of a job that maps it (`from`): checked by the event's schema first.
  let input = envelope.args;
  const from = envelope.event === undefined || job.kind !== 'sqs-jobs/job' ? undefined : job.on?.from;
  if (from !== undefined && job.kind === 'sqs-jobs/job' && job.on !== undefined) {
    const payload = job.on.event.payload.safeParse(envelope.args);
    if (!payload.success) return { ok: false, envelope, reason: 'invalid-args', detail: issuesText(payload.error, 'payload'), info };
    try {
      input = from(payload.data);
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      return { ok: false, envelope, reason: 'invalid-args', detail: `from: threw ${e.name}: ${e.message}`, info };
    }
  }
  const parsed = job.args.safeParse(input);
  if (!parsed.success)
    return {
      ok: false,
      envelope,
      reason: 'invalid-args',
      detail: issuesText(parsed.error, 'args'),
      info,
    };
  // The reading keeps the args once, as validated: the envelope's copy from the body (a schema's
  // parse makes a new object) would otherwise be held beside them for as long as the job runs.
  return { ok: true, envelope: { ...envelope, args: parsed.data }, job, args: parsed.data, info };
}

function issuesText(error: Parameters<typeof fieldIssues>[0], root: string): string {
  return fieldIssues(error, root)
    .map((i) => `${i.field}: ${i.rule}`)
    .join('; ');
}
