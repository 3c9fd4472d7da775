import { z } from 'zod';
import { zodSchema } from './definition-rules.js';
import { ValidationError } from './errors.js';
import { parseWith } from './validation.js';

/**
 * An event: something that happened, published once to its SNS topic; every job that subscribes
 * (`defineJob({ on: event })`) runs once, from its own queue. The payload is checked by its schema
 * at publish, as enqueue checks a job's args.
 */
export interface EventDefinition<Payload extends z.ZodType = z.ZodType> {
  readonly kind: 'sqs-jobs/event';
  readonly name: string;
  readonly payload: Payload;
  /** The SNS topic's name (default: the event's name with `.` as `-`). */
  readonly topic: string;
  /** A full topic ARN, when the topic is not in the producer's account and region. */
  readonly topicArn: string | undefined;
  /**
   * A FIFO topic (its name ends in `.fifo`): events of one group (the publish's `groupId`) reach
   * each subscriber in order, once (SNS drops a repeat of an event id within 5 minutes), on FIFO
   * subscriber queues.
   */
  readonly fifo: boolean;
}

/** An event made by defineEvent(), whatever its payload schema. */
export type AnyEvent = EventDefinition<z.ZodType>;

/** What an event's payload is as the caller passes it to publish (the schema's input type). */
export type EventPayload<E> = E extends { readonly kind: 'sqs-jobs/event'; readonly payload: infer P extends z.ZodType }
  ? z.input<P>
  : never;

/** Event names: like job names (`order.placed`, `user-signed-up`), at most 80 characters. */
const EVENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$/;
/** SNS topic names: 1-256 of letters, digits, _ and - (a FIFO topic's ends in .fifo, within the 256). */
const TOPIC_NAME_PATTERN = /^(?=.{1,256}$)[A-Za-z0-9_-]+(\.fifo)?$/;

const eventSpecSchema = z
  .object({
    name: z.string().regex(EVENT_NAME_PATTERN, 'must be 1-80 characters of letters, digits, _ . - and start with a letter or digit'),
    payload: zodSchema,
    topic: z
      .string()
      .regex(TOPIC_NAME_PATTERN, 'must be 1-256 characters of letters, digits, _ and - (an SNS topic name; .fifo at the end for FIFO)')
      .optional(),
    topicArn: z
      .string()
      .regex(
        /^arn:[a-z-]+:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,251}(\.fifo)?$/,
        'must be an SNS topic ARN (arn:aws:sns:<region>:<account>:<topic>)',
      )
      .optional(),
    fifo: z.boolean().optional(),
  })
  .strict()
  .superRefine((spec, ctx) => {
    const named = spec.topicArn ?? spec.topic;
    if (named === undefined) return;
    const path = [spec.topicArn === undefined ? 'topic' : 'topicArn'];
    if (spec.fifo === true && !named.endsWith('.fifo'))
      ctx.addIssue({ code: 'custom', path, message: 'must end in .fifo for a FIFO event (fifo: true)' });
    if (spec.fifo !== true && named.endsWith('.fifo'))
      ctx.addIssue({ code: 'custom', path: ['fifo'], message: 'must be true: the topic is a FIFO topic (.fifo)' });
  });

interface EventSpec<Payload extends z.ZodType> {
  name: string;
  payload: Payload;
  topic?: string;
  topicArn?: string;
  /** A FIFO topic: ordered per group, once per event id (default false). */
  fifo?: boolean;
}

/** Define an event: its name and the zod schema of its payload. */
export function defineEvent<Payload extends z.ZodType>(spec: EventSpec<Payload>): EventDefinition<Payload> {
  const parsed = parseWith(
    eventSpecSchema,
    spec,
    'event',
    (issues) => new ValidationError('OPTIONS_INVALID', 'invalid event definition', issues),
  );
  const fifo = parsed.fifo ?? false;
  const topic = parsed.topicArn?.split(':').at(-1) ?? parsed.topic ?? defaultTopicOf(parsed.name, fifo);
  return Object.freeze({ kind: 'sqs-jobs/event', name: parsed.name, payload: spec.payload, topic, topicArn: parsed.topicArn, fifo });
}

/** The topic an event gets when none is named: its name with `.` as `-` (and `.fifo` for a FIFO event). */
export function defaultTopicOf(name: string, fifo: boolean): string {
  return `${name.replaceAll('.', '-')}${fifo ? '.fifo' : ''}`;
}

export function isEventDefinition(value: unknown): value is AnyEvent {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'sqs-jobs/event';
}

/**
 * An SNS filter policy on the message attributes a publish sets (`sqsjobs-event`, `sqsjobs-tenant`
 * and the `attributes` given), e.g. `{ region: ['eu-west-1'] }` or `{ 'sqsjobs-tenant': ['acme'] }`.
 */
export type FilterPolicy = Readonly<Record<string, readonly unknown[]>>;

/** What a job subscribes to: the event, and the filter policy of its subscription (none: every publish). */
export interface Subscription {
  readonly event: AnyEvent;
  readonly filter: FilterPolicy | undefined;
  /** The job's args made from the event's payload (defineJob's `from`); undefined: the payload is the args. */
  readonly from: ((payload: unknown) => unknown) | undefined;
}

/** `on: event` or `on: [event, filterPolicy]`, as defineJob takes it. */
type OnEvent = AnyEvent | readonly [AnyEvent, FilterPolicy];

export const onEventSchema = z.union([
  z.custom<AnyEvent>(isEventDefinition, 'must be an event made by defineEvent()'),
  z.tuple([
    z.custom<AnyEvent>(isEventDefinition, 'must be an event made by defineEvent()'),
    z
      .record(z.string().min(1), z.array(z.unknown()).min(1, 'must list at least one value'))
      .refine((policy) => Object.keys(policy).length <= 5, 'a filter policy may name at most 5 attributes (SNS limit)'),
  ]),
]);

export function subscriptionOf(on: OnEvent, from?: (payload: unknown) => unknown): Subscription {
  return isEventDefinition(on) ? { event: on, filter: undefined, from } : { event: on[0], filter: on[1], from };
}

/** The SNS notification a queue gets from a subscription without raw delivery (one someone else made). */
interface SnsNotification {
  readonly topicArn: string;
  readonly message: string;
  readonly messageId: string | undefined;
}

/** `parsed` as an SNS notification (Type "Notification", TopicArn, Message), else undefined. */
export function asSnsNotification(parsed: unknown): SnsNotification | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const n = parsed as { Type?: unknown; TopicArn?: unknown; Message?: unknown; MessageId?: unknown };
  if (n.Type !== 'Notification' || typeof n.TopicArn !== 'string' || typeof n.Message !== 'string') return undefined;
  return { topicArn: n.TopicArn, message: n.Message, messageId: typeof n.MessageId === 'string' ? n.MessageId : undefined };
}

/** The topic name an ARN ends with. */
export function topicNameOf(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}

/** The queue a subscriber job runs from (`provisionEvents` makes it): its name, with `.` and `:` as `-` (and `.fifo` on a FIFO event's). */
export function subscriberQueueNameFor(jobName: string, fifo = false): string {
  return `${jobName.replace(/[.:]/g, '-')}${fifo ? '.fifo' : ''}`;
}

export const ATTR_EVENT = 'sqsjobs-event';
export const ATTR_TENANT = 'sqsjobs-tenant';
