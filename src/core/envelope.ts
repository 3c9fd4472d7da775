import { createHash, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { asSnsNotification } from './event.js';
import { type TraceContext, traceContextSchema } from './trace-context.js';

/**
 * Wire format v1. The message body is JSON:
 *   {"v":1,"id":"<job id>","job":"<job name>","args":{…},"enqueuedAt":"<ISO-8601>","tenant":"<optional>",
 *    "track":true (optional), "parent":"<optional job id>",
 *    "trace":{"traceparent":"00-…","tracestate":"…","baggage":"…"} (optional)}
 * `id` is the dedupe key; a body without one falls back to the SQS MessageId. `track` asks the
 * worker to record the job's status in the job store; `parent` names the fan-out the job is a child of;
 * `trace` is the W3C trace context the job was sent under (a malformed one is ignored, see trace-context.ts).
 * Message attributes repeat the job name and id so a consumer can route without parsing.
 *
 * An event (published to SNS, delivered raw to each subscriber's queue) has `event` instead of
 * `job`, and its `id` is the event id:
 *   {"v":1,"id":"<event id>","event":"<event name>","args":{…},"enqueuedAt":"<ISO-8601>","tenant":"<optional>"}
 * A worker runs the job that subscribes to it there, under the job id `<event id>.<job name>`.
 * A subscription without raw delivery wraps the body in an SNS notification (`Message`); a worker
 * reads it only from the topics of the events its jobs subscribe to.
 */
export const ENVELOPE_VERSION = 1;

export const ATTR_JOB = 'sqsjobs-job';
export const ATTR_JOB_ID = 'sqsjobs-id';

/** Job ids are memcached keys and log fields: keep them short and printable. */
/** What a job id may be made of (1-128 of them). */
export const JOB_ID_PATTERN = /^[A-Za-z0-9_.:-]+$/;

/** Schedule ids: like job names, and short enough that `<id>:<epoch seconds>` is a job id (≤ 128). */
export const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

export const jobIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters')
  .regex(JOB_ID_PATTERN, 'may contain only letters, digits, _ . : -');

/** A MessageGroupId or MessageDeduplicationId (SQS's and SNS's rule). */
export const sqsIdText = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[\x21-\x7e]+$/, 'may contain only printable ASCII without spaces');

export const tenantSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(128, 'must be at most 128 characters (SQS MessageGroupId limit)')
  .regex(/^[\x21-\x7e]+$/, 'may contain only printable ASCII without spaces (SQS MessageGroupId rule)');

const envelopeSchema = z.object({
  v: z.literal(ENVELOPE_VERSION),
  id: jobIdSchema.optional(),
  job: z.string().min(1).max(80).optional(),
  event: z.string().min(1).max(80).optional(),
  args: z.unknown(),
  enqueuedAt: z.iso.datetime({ offset: true }).optional(),
  tenant: tenantSchema.optional(),
  track: z.boolean().optional(),
  parent: jobIdSchema.optional(),
  trace: traceContextSchema,
  // An occurrence of a schedule fired outside sqs-jobs (EventBridge Scheduler's `<aws.scheduler.scheduled-time>`): its job id is the occurrence's.
  schedule: z.string().regex(SCHEDULE_ID_PATTERN, 'must be a schedule id').optional(),
  scheduledAt: z.iso.datetime({ offset: true }).optional(),
});

export interface Envelope {
  readonly v: 1;
  readonly id: string;
  readonly job: string;
  readonly args: unknown;
  readonly enqueuedAt: string;
  readonly tenant?: string;
  /** Record this job's status in the job store (job status, progress). */
  readonly track?: boolean;
  /** The job id of the fan-out this job is a child of: its end is counted there. */
  readonly parent?: string;
  /** The W3C trace context the job was sent under. */
  readonly trace?: TraceContext;
  /** The event this job runs on (an event message, read by a subscriber): its name and id. Not on the wire of a job message. */
  readonly event?: { readonly name: string; readonly id: string };
}

export function newJobId(): string {
  return randomUUID();
}

export function encodeEnvelope(envelope: Envelope): string {
  const { v, id, job, args, enqueuedAt, tenant, track, parent, trace } = envelope;
  return JSON.stringify({
    v,
    id,
    job,
    args,
    enqueuedAt,
    ...(tenant === undefined ? {} : { tenant }),
    ...(track ? { track: true } : {}),
    ...(parent === undefined ? {} : { parent }),
    ...(trace === undefined ? {} : { trace }),
  });
}

/** Why a body is poison. Poison goes to the DLQ at once and is never retried. */
export type PoisonReason = 'invalid-json' | 'not-an-envelope' | 'unsupported-version' | 'unknown-job' | 'invalid-args' | 'unknown-topic';

type Poison = { readonly reason: PoisonReason; readonly detail: string };

/** How a reader takes events: which topics' notifications it reads, and which job runs an event here. */
export interface EventRouting {
  /** Whether a (wrapped) SNS notification from this topic may be read. */
  topicAllowed(topicArn: string): boolean;
  /** The job that runs `event` here (delivered from `topicArn` when it came wrapped), or why none does. */
  subscriber(event: string, topicArn: string | undefined): string | Poison;
}

/** A reader that takes no event (producers, DLQ tools): every event is an unknown job, every notification an unknown topic. */
const NO_EVENTS: EventRouting = {
  topicAllowed: () => false,
  subscriber: (event) => ({ reason: 'unknown-job', detail: `no job here subscribes to the event "${event}"` }),
};

type Decoded =
  | { readonly ok: true; readonly envelope: Envelope }
  | { readonly ok: false; readonly reason: PoisonReason; readonly detail: string };

/**
 * Decode a body. Never throws: a body that is not a v1 envelope comes back with the reason.
 * `fallback` supplies the id (SQS MessageId) and enqueue time (SentTimestamp) when the body has none.
 */
export function decodeEnvelope(body: string, fallback: { messageId: string; sentAt: number }, events: EventRouting = NO_EVENTS): Decoded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: 'invalid-json', detail: `body is not JSON: ${(error as Error).message}` };
  }
  const notification = asSnsNotification(parsed);
  if (notification !== undefined) {
    if (!events.topicAllowed(notification.topicArn)) {
      return {
        ok: false,
        reason: 'unknown-topic',
        detail: `an SNS notification from ${notification.topicArn}, a topic no job here subscribes to`,
      };
    }
    try {
      parsed = JSON.parse(notification.message);
    } catch (error) {
      return { ok: false, reason: 'invalid-json', detail: `the SNS notification's Message is not JSON: ${(error as Error).message}` };
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, reason: 'not-an-envelope', detail: 'body is JSON but not an object' };
  }
  const version = (parsed as { v?: unknown }).v;
  if (version !== ENVELOPE_VERSION) {
    return {
      ok: false,
      reason: 'unsupported-version',
      detail: `envelope version ${JSON.stringify(version) ?? 'missing'} is not supported (expected ${ENVELOPE_VERSION})`,
    };
  }
  const result = envelopeSchema.safeParse(parsed);
  if (!result.success) {
    const detail = result.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
    return { ok: false, reason: 'not-an-envelope', detail };
  }
  const e = result.data;
  let job = e.job;
  let event: Envelope['event'];
  let id = e.id ?? fallback.messageId;
  if (e.job !== undefined && e.event !== undefined)
    return { ok: false, reason: 'not-an-envelope', detail: 'body: names both a job and an event (one or the other)' };
  if (e.schedule !== undefined || e.scheduledAt !== undefined) {
    if (e.schedule === undefined || e.scheduledAt === undefined || e.id !== undefined || e.job === undefined)
      return {
        ok: false,
        reason: 'not-an-envelope',
        detail: 'schedule: a job of an occurrence names its schedule and scheduledAt, and no id',
      };
    id = occurrenceJobId(e.schedule, Math.floor(Date.parse(e.scheduledAt) / 1000));
  }
  // Through SNS come events only: a topic's publisher cannot name a job to run.
  if (notification !== undefined && e.event === undefined)
    return { ok: false, reason: 'not-an-envelope', detail: `the SNS notification from ${notification.topicArn} carries no event` };
  if (job === undefined) {
    if (e.event === undefined) return { ok: false, reason: 'not-an-envelope', detail: 'body: names neither a job nor an event' };
    if (e.parent !== undefined) return { ok: false, reason: 'not-an-envelope', detail: 'parent: an event is not a fan-out child' };
    // An event's id is what makes each subscriber run once: SNS's own message id for a wrapped one
    // that has none (the same on each of its deliveries); a raw one without it is refused.
    const eventId = e.id ?? notification?.messageId;
    if (eventId === undefined || !jobIdSchema.safeParse(eventId).success)
      return { ok: false, reason: 'not-an-envelope', detail: 'id: an event needs its id (each subscriber runs once per event id)' };
    const subscriber = events.subscriber(e.event, notification?.topicArn);
    if (typeof subscriber !== 'string') return { ok: false, ...subscriber };
    event = { name: e.event, id: eventId };
    job = subscriber;
    id = derivedJobId(eventId, subscriber);
  }
  return {
    ok: true,
    envelope: {
      v: ENVELOPE_VERSION,
      id,
      job,
      args: e.args,
      // An occurrence's job waited from its time.
      enqueuedAt:
        e.enqueuedAt ?? (e.scheduledAt === undefined ? new Date(fallback.sentAt).toISOString() : new Date(e.scheduledAt).toISOString()),
      ...(e.tenant === undefined ? {} : { tenant: e.tenant }),
      ...(e.track ? { track: true } : {}),
      ...(e.parent === undefined ? {} : { parent: e.parent }),
      ...(e.trace === undefined ? {} : { trace: e.trace }),
      ...(event === undefined ? {} : { event }),
    },
  };
}

/** The job id of a schedule's occurrence, in epoch seconds: the same however often it is sent (the tick's, EventBridge Scheduler's). */
export function occurrenceJobId(scheduleId: string, occurrenceS: number): string {
  return `${scheduleId}:${occurrenceS}`;
}

/**
 * A job id made from another: `<id>.<suffix>` while it fits the 128-character limit, else a hash
 * of the id before the suffix. Deterministic: a fan-out's children (suffix `c<n>`) and an event's
 * subscribers (suffix: the job's name) get the same ids however often they are sent, so the dedupe
 * lock and the fan-out counters see them as the same jobs.
 */
export function derivedJobId(jobId: string, suffix: string): string {
  const plain = `${jobId}.${suffix}`;
  return plain.length <= 128 ? plain : `${createHash('sha256').update(jobId).digest('hex').slice(0, 40)}.${suffix}`.slice(0, 128);
}

export interface StringAttribute {
  readonly DataType: 'String';
  readonly StringValue: string;
}

/** The message attributes sent with every job. */
export function envelopeAttributes(envelope: Envelope): Record<string, StringAttribute> {
  return {
    [ATTR_JOB]: { DataType: 'String', StringValue: envelope.job },
    [ATTR_JOB_ID]: { DataType: 'String', StringValue: envelope.id },
  };
}
