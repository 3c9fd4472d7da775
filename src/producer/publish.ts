import { createHash } from 'node:crypto';
import { z } from 'zod';
import { implementing } from '../config/env.js';
import { ENVELOPE_VERSION, jobIdSchema, newJobId, sqsIdText, tenantSchema } from '../core/envelope.js';
import { findForbiddenCharacter, messageSize } from '../core/sqs-text.js';
import { PayloadTooLargeError, ValidationError } from '../core/errors.js';
import { type AnyEvent, ATTR_EVENT, ATTR_TENANT } from '../core/event.js';
import { ATTR_JOB_ID } from '../core/envelope.js';
import type { MessageAttributes } from '../core/message.js';
import type { TraceContext } from '../core/trace-context.js';
import { parseWith } from '../core/validation.js';
import type { TopicPort } from '../ports/topics.js';

/** SNS takes messages of at most 256 KiB (body and attributes). */
export const SNS_MAX_MESSAGE_BYTES = 262_144;

/** SQS keeps at most 10 message attributes; a raw delivery carries the publish's: 3 are sqs-jobs' own. */
const MAX_USER_ATTRIBUTES = 7;

export const publishOptionsSchema = z
  .object({
    /** The event id (default: a new one): a publish with the same id runs each subscriber once. */
    id: jobIdSchema.optional(),
    tenant: tenantSchema.optional(),
    /** A FIFO event's message group (required for one, refused for a standard event): events of a group reach each subscriber in order. */
    groupId: sqsIdText.optional(),
    /** Message attributes (strings) that subscriptions' filter policies can match, e.g. `{ region: 'eu-west-1' }`. */
    attributes: z
      .record(z.string(), z.string().min(1, 'must not be empty').max(1_024, 'must be at most 1024 characters'))
      .superRefine((attributes, ctx) => {
        const names = Object.keys(attributes);
        if (names.length > MAX_USER_ATTRIBUTES)
          ctx.addIssue({ code: 'custom', message: `at most ${MAX_USER_ATTRIBUTES} (SQS keeps 10 attributes; sqs-jobs uses 3)` });
        for (const name of names) {
          if (!/^[A-Za-z0-9_.-]{1,256}$/.test(name))
            ctx.addIssue({ code: 'custom', path: [name], message: 'a name must be 1-256 letters, digits, _ . -' });
          else if (/^(sqsjobs-|aws\.)/i.test(name))
            ctx.addIssue({ code: 'custom', path: [name], message: 'the sqsjobs- and aws. prefixes are reserved' });
        }
      })
      .optional(),
  })
  .strict();

/** Options of one `publish`: the event id, tenant, FIFO group and message attributes for filter policies. */
export type PublishOptions = z.input<typeof publishOptionsSchema>;

/** What a published event got: its event id (yours or a new one) and the SNS message id. */
export interface PublishResult {
  readonly eventId: string;
  readonly messageId: string;
}

/** The producer's `events` option: where events are published. */
export const eventsOptionSchema = z
  .object({
    /** The topics port (default: SNS through the AWS SDK). */
    topics: implementing<TopicPort>('TopicPort (publish, publishBatch)', ['publish', 'publishBatch']).optional(),
    /** SNS endpoint (default AWS_ENDPOINT_URL_SNS, else the SQS endpoint's). */
    endpoint: z.string().optional(),
    /** The account of the topics (default: the producer's queue's; with neither, each topic is looked up by name once). */
    account: z
      .string()
      .regex(/^\d{12}$/, 'must be a 12-digit AWS account id')
      .optional(),
  })
  .strict()
  .optional();

export const publishManyOptionsSchema = publishOptionsSchema
  .omit({ id: true })
  .extend({
    /** One event id per payload (default: new ones): publishing the list again runs each subscriber once per event. */
    ids: z.array(jobIdSchema).optional(),
    /** A FIFO event's group per payload (instead of one `groupId` for all). */
    groupIds: z.array(sqsIdText).optional(),
  })
  .strict()
  .refine((o) => o.groupId === undefined || o.groupIds === undefined, {
    path: ['groupIds'],
    message: 'give groupId or groupIds, not both',
  });

/** Options of `publishMany`: those of `publish` without `id`, plus `ids` (one per payload) and `groupIds` (or one `groupId`). */
export type PublishManyOptions = z.input<typeof publishManyOptionsSchema>;

/** One event as it will be published: checked, encoded, sized. */
export interface PreparedEvent {
  readonly eventId: string;
  readonly body: string;
  readonly attributes: MessageAttributes;
  readonly size: number;
  /** FIFO events: the group, and the event id as the deduplication id. */
  readonly groupId: string | undefined;
  readonly deduplicationId: string | undefined;
}

/** The options of publish (or publishMany's shared ones), checked. */
export function parsePublishOptions<S extends typeof publishOptionsSchema | typeof publishManyOptionsSchema>(
  schema: S,
  options: unknown,
  event: AnyEvent,
): z.output<S> {
  return parseWith(
    schema,
    options,
    'options',
    (issues) => new ValidationError('OPTIONS_INVALID', `invalid publish options for event "${event.name}"`, issues),
  ) as z.output<S>;
}

/**
 * Check one payload by the event's schema and make its message: nothing is sent when any of it is
 * wrong. `field` names the payload in errors (`payload`, or `payloads[3]` for publishMany).
 */
export function prepareEvent(
  event: AnyEvent,
  payload: unknown,
  opts: {
    readonly id?: string | undefined;
    readonly tenant?: string | undefined;
    readonly groupId?: string | undefined;
    readonly attributes?: Record<string, string> | undefined;
    /** The trace context the event carries (left out when the message would not fit with it). */
    readonly trace?: TraceContext | undefined;
  },
  maxMessageBytes: number,
  field = 'payload',
): PreparedEvent {
  if (event.fifo !== (opts.groupId !== undefined)) {
    throw new ValidationError('OPTIONS_INVALID', `invalid publish options for event "${event.name}"`, [
      event.fifo
        ? { field: 'options.groupId', rule: 'is required: the event is FIFO (its events are ordered within a group)' }
        : { field: 'options.groupId', rule: 'is only for a FIFO event (defineEvent({ fifo: true }))' },
    ]);
  }
  const valid = parseWith(
    event.payload,
    payload,
    field,
    (issues) => new ValidationError('ARGS_INVALID', `invalid payload for event "${event.name}"`, issues),
  );
  const forbidden = findForbiddenCharacter(valid, field);
  if (forbidden !== undefined) {
    throw new ValidationError('ARGS_INVALID', `invalid payload for event "${event.name}"`, [
      { field: forbidden.path, rule: `contains ${forbidden.codePoint}, a character SQS does not accept in messages` },
    ]);
  }
  const eventId = opts.id ?? newJobId();
  const envelope = {
    v: ENVELOPE_VERSION,
    id: eventId,
    event: event.name,
    args: valid,
    enqueuedAt: new Date().toISOString(),
    ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
  };
  let body = JSON.stringify(opts.trace === undefined ? envelope : { ...envelope, trace: opts.trace });
  const attributes: Record<string, { DataType: 'String'; StringValue: string }> = {
    [ATTR_EVENT]: { DataType: 'String', StringValue: event.name },
    [ATTR_JOB_ID]: { DataType: 'String', StringValue: eventId },
    ...(opts.tenant === undefined ? {} : { [ATTR_TENANT]: { DataType: 'String', StringValue: opts.tenant } }),
  };
  for (const [k, v] of Object.entries(opts.attributes ?? {})) attributes[k] = { DataType: 'String', StringValue: v };
  let size = messageSize(body, attributes);
  // Its telemetry never costs an event its publish: too large with the trace, it goes without.
  if (size > maxMessageBytes && opts.trace !== undefined) {
    body = JSON.stringify(envelope);
    size = messageSize(body, attributes);
  }
  if (size > maxMessageBytes)
    throw new PayloadTooLargeError(`event "${event.name}"${field === 'payload' ? '' : ` ${field}`}`, size, maxMessageBytes);
  return {
    eventId,
    body,
    attributes,
    size,
    groupId: opts.groupId,
    deduplicationId: event.fifo ? deduplicationIdOf(event.name, eventId) : undefined,
  };
}

/**
 * A FIFO publish's MessageDeduplicationId: `<event name>:<event id>`, so that two events sharing a
 * FIFO topic (which deduplicates topic-wide) never drop each other's ids; its SHA-256 (base64url)
 * when that passes SNS's 128 characters.
 */
function deduplicationIdOf(eventName: string, eventId: string): string {
  const id = `${eventName}:${eventId}`;
  return id.length <= 128 ? id : createHash('sha256').update(id).digest('base64url');
}
