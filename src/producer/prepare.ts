import type { z } from 'zod';
import { type Envelope, encodeEnvelope, envelopeAttributes, newJobId } from '../core/envelope.js';
import { messageSize } from '../core/sqs-text.js';
import { ConfigError, PayloadTooLargeError, ValidationError } from '../core/errors.js';
import { isFifoQueue } from '../core/queue-url.js';
import type { AnyDefinition } from '../core/job.js';
import { admissionKey } from './admission/admission.js';
import { laneUrlFor } from '../core/priority.js';
import { checkedArgs } from './args.js';
import { delayOf, dueMsOf, type enqueueOptionsSchema } from './options.js';
import { checkOptionsFit } from './fit.js';
import type { PreparedMessage } from './send-many.js';
import type { TraceContext } from '../core/trace-context.js';

/** The largest job kept in the job store until its time: a DynamoDB item holds 400 KB, the message and its bookkeeping. */
export const MAX_KEPT_BYTES = 350_000;

/** What enqueue's options are once parsed. */
export type EnqueueSettings = z.output<typeof enqueueOptionsSchema>;

/** What a producer is, as far as making its messages goes. */
export interface Preparing {
  readonly queueUrl: string;
  readonly maxMessageBytes: number;
  readonly fifo: boolean;
  readonly hasStore: boolean;
  /** Jobs go to their tier's lane (the `tiers` option). */
  readonly tiers: boolean;
  /** Tenants with a queue of their own (the `tenantQueues` option). */
  readonly tenantQueues: Readonly<Record<string, string>>;
  /** Admission is on: each message carries its admission key. */
  readonly keyed: boolean;
  /** Delays up to this are SQS's (the `maxSqsDelaySeconds` option); longer ones are kept in the job store. */
  readonly maxSqsDelaySeconds: number;
  /** The job store keeps jobs until their time. */
  readonly keepsTimed: boolean;
  /** The job store keeps keys on enqueue (singleton, throttle, debounce). */
  readonly keepsKeys: boolean;
}

/**
 * The message to send for a job: options checked against the producer, args by the job's schema,
 * the envelope encoded and its size checked; addressed to its tenant's own queue or else its
 * tier's lane (spillover, which may send it elsewhere, is the producer's to decide when it sends).
 */
export function prepareMessage(
  p: Preparing,
  job: AnyDefinition,
  args: unknown,
  opts: EnqueueSettings,
  argsField: string,
  trace?: TraceContext,
  /** The time the job is put off from: one for all the jobs of an enqueueMany, so all are kept or none. */
  nowMs = Date.now(),
): PreparedMessage {
  checkOptionsFit(job.name, opts, p);
  const delay = delayOf(opts, nowMs);
  const kept = delay > p.maxSqsDelaySeconds;
  const timing = `options.${opts.runAt === undefined ? 'delaySeconds' : 'runAt'}`;
  const refuse = (rule: string) =>
    new ValidationError('OPTIONS_INVALID', `invalid enqueue options for job "${job.name}"`, [{ field: timing, rule }]);
  if (kept && !p.keepsTimed) {
    throw refuse(
      `beyond ${p.maxSqsDelaySeconds} s (SQS's delay limit) needs the job store: set the producer option store ({ table }) or SQS_JOBS_JOB_TABLE`,
    );
  }
  const validArgs = checkedArgs(job, args, argsField);
  const envelope: Envelope = {
    v: 1,
    id: opts.jobId ?? newJobId(),
    job: job.name,
    args: validArgs,
    enqueuedAt: new Date().toISOString(),
    ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
    ...(opts.track ? { track: true } : {}),
    ...(opts.parent === undefined ? {} : { parent: opts.parent }),
  };
  const attributes = envelopeAttributes(envelope);
  let body = encodeEnvelope(trace === undefined ? envelope : { ...envelope, trace });
  let size = messageSize(body, attributes);
  // The trace context never makes a job too large: a job that fits without it goes without it (as check() sees it).
  if (size > p.maxMessageBytes && trace !== undefined) {
    body = encodeEnvelope(envelope);
    size = messageSize(body, attributes);
  }
  if (size > p.maxMessageBytes) throw new PayloadTooLargeError(`job "${job.name}"`, size, p.maxMessageBytes);
  if (kept && size > MAX_KEPT_BYTES)
    throw refuse(
      `a job kept in the job store until its time must be at most ${MAX_KEPT_BYTES} bytes (a DynamoDB item holds 400 KB); it is ${size}`,
    );
  const groupId = opts.groupId ?? opts.tenant ?? (p.fifo ? envelope.id : undefined);
  return {
    queueUrl: destinationOf(p, job, opts),
    jobId: envelope.id,
    body,
    attributes,
    size,
    // An explicit 0 stays (it overrides a queue's own default delay).
    delaySeconds: kept ? undefined : opts.runAt === undefined ? opts.delaySeconds : delay,
    dueMs: kept ? dueMsOf(opts, nowMs) : undefined,
    groupId,
    deduplicationId: p.fifo ? (opts.deduplicationId ?? envelope.id) : undefined,
    track: opts.track ? { enqueuedAt: envelope.enqueuedAt, parentId: opts.parent, tenant: opts.tenant } : undefined,
    admissionKey: p.keyed ? admissionKey(job.name, validArgs, opts.tenant, opts.jobId) : undefined,
  };
}

/** Where a job goes before spillover has its say: its tenant's own queue, else its tier's lane, else the queue. */
export function destinationOf(p: Preparing, job: AnyDefinition, opts: EnqueueSettings): string {
  return ownQueueOf(p, opts.tenant) ?? (p.tiers ? laneUrlFor(p.queueUrl, opts.priority ?? job.priority) : p.queueUrl);
}

/** The queue of `tenant`'s own (tenantQueues), if it has one. Own properties only: a tenant named "constructor" has none unless given. */
function ownQueueOf(p: Pick<Preparing, 'tenantQueues'>, tenant: string | undefined): string | undefined {
  return tenant !== undefined && Object.hasOwn(p.tenantQueues, tenant) ? p.tenantQueues[tenant] : undefined;
}

/** Each tenant queue must be of the producer's queue's kind, standard or FIFO. */
export function checkTenantQueues(tenantQueues: Readonly<Record<string, string>>, fifo: boolean): void {
  for (const [tenant, url] of Object.entries(tenantQueues)) {
    if (isFifoQueue(url) === fifo) continue;
    const kind = fifo ? 'FIFO (.fifo)' : 'standard';
    throw new ConfigError(`invalid producer options: options.tenantQueues.${tenant}: must be a ${kind} queue, as options.queueUrl is`);
  }
}
