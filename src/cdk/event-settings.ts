import { z } from 'zod';
import { JOB_NAME_PATTERN } from '../core/definition-rules.js';
import { ValidationError } from '../core/errors.js';
import { type AnyEvent, defineEvent, type Subscription, subscriberQueueNameFor } from '../core/event.js';
import type { AnyDefinition, AnyJob } from '../core/job.js';
import { filterPolicyOf } from '../ops/events.js';
import { dlqNameFor } from '../ops/queues.js';

/**
 * One job that runs on an event (`defineJob({ name: job, on: [event, filterPolicy] })` in the
 * jobs module): the stack makes what `sqs-jobs events create` makes for it. The rules of names,
 * topics and filter policies are sqs-jobs' own (defineEvent, filterPolicyOf), checked in
 * `eventSettingsIssues`.
 */
export const eventSettingSchema = z
  .object({
    /** The event's name, as in defineEvent (`order.placed`). */
    event: z.string(),
    /** The subscriber job's name; its queue is this with `.` and `:` as `-`. */
    job: z.string().regex(JOB_NAME_PATTERN, 'must be 1-80 characters of letters, digits, _ . : - and start with a letter or digit'),
    /** The topic's name, when not the event's name with `.` as `-` (as defineEvent's `topic`). */
    topic: z.string().optional(),
    /** An existing topic (as defineEvent's `topicArn`): subscribed to, not created. */
    topicArn: z.string().optional(),
    /** A FIFO event (as defineEvent's `fifo`): a FIFO topic (`.fifo`) and FIFO subscriber queues. */
    fifo: z.boolean().optional(),
    /** The job's filter policy on the publish's message attributes (as `on: [event, filter]`). */
    filterPolicy: z.record(z.string().min(1), z.array(z.unknown()).min(1, 'must list at least one value')).optional(),
  })
  .strict()
  .refine((e) => e.topic === undefined || e.topicArn === undefined, { path: ['topic'], message: 'give topic or topicArn, not both' });

/**
 * One entry of the `events` setting: a subscriber `job` and the `event` it runs on (with `topic` or
 * `topicArn`, `fifo`, `filterPolicy` as the event and job define them); `eventSettingsOf` builds them.
 */
export type EventSetting = z.output<typeof eventSettingSchema>;

/** The subscription the setting stands for, as sqs-jobs builds it from `defineJob({ on })` (throws ValidationError). */
export function subscriptionOf(e: EventSetting): Subscription {
  const event = defineEvent({
    name: e.event,
    payload: z.unknown(),
    ...(e.topic === undefined ? {} : { topic: e.topic }),
    ...(e.topicArn === undefined ? {} : { topicArn: e.topicArn }),
    ...(e.fifo === undefined ? {} : { fifo: e.fifo }),
  });
  return { event, filter: e.filterPolicy, from: undefined };
}

/** Where an event's topic is: the ARN given, else its name in the stack's account. */
export function topicKeyOf(event: AnyEvent): string {
  return event.topicArn ?? event.topic;
}

/**
 * The `events` settings of the jobs a module exports (what `sqs-jobs events create --jobs` reads),
 * for a CDK app that can import them: `events: eventSettingsOf(Object.values(await import('./jobs.js')))`.
 */
export function eventSettingsOf(jobs: readonly unknown[]): EventSetting[] {
  return jobs
    .filter(
      (j): j is AnyJob & { on: Subscription } =>
        (j as AnyDefinition | undefined)?.kind === 'sqs-jobs/job' && (j as AnyJob).on !== undefined,
    )
    .map((j) => ({
      event: j.on.event.name,
      job: j.name,
      ...(j.on.event.topicArn === undefined ? { topic: j.on.event.topic } : { topicArn: j.on.event.topicArn }),
      ...(j.on.event.fifo ? { fifo: true } : {}),
      ...(j.on.filter === undefined ? {} : { filterPolicy: j.on.filter as Record<string, unknown[]> }),
    }));
}

interface EventIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

/** SQS queue names are at most 80 characters; the DLQ's adds "-dlq" (provisionEvents' rule). */
const MAX_SUBSCRIBER_QUEUE_NAME = 76;
/** A CloudWatch alarm on metric math reads at most 10 metrics; the scaling alarm sums every served queue's depth. */
const MAX_SERVED_QUEUES = 10;

/**
 * What `provisionEvents` would refuse, and what the stack cannot deploy: an event name, topic or
 * filter policy sqs-jobs rejects; a job listed twice; two jobs sharing a queue name, or one taking a
 * name of the stack's own queues; one event on two topics; more queues than the scaling alarm reads.
 */
export function eventSettingsIssues(
  events: readonly EventSetting[],
  stack: { readonly served: readonly string[]; readonly deadLetterQueue: string },
): EventIssue[] {
  const issues: EventIssue[] = [];
  /** Queue name → whose it is. */
  const taken = new Map<string, string>(stack.served.map((q) => [q, "the stack's queue"]));
  taken.set(stack.deadLetterQueue, "the stack's DLQ");
  const jobs = new Set<string>();
  const topicOfEvent = new Map<string, string>();
  events.forEach((e, i) => {
    const at = (field: string) => ['events', i, field];
    let sub: Subscription;
    try {
      sub = subscriptionOf(e);
      filterPolicyOf(sub);
    } catch (error) {
      if (error instanceof ValidationError) {
        const fields: Record<string, string> = {
          'event.name': 'event',
          'event.topic': 'topic',
          'event.topicArn': 'topicArn',
          'event.fifo': 'fifo',
        };
        for (const issue of error.issues) issues.push({ path: at(fields[issue.field] ?? 'event'), message: issue.rule });
      } else issues.push({ path: at('filterPolicy'), message: error instanceof Error ? error.message : String(error) });
      return;
    }
    if (!JOB_NAME_PATTERN.test(e.job)) return; // its own issue says why
    if (jobs.has(e.job)) {
      issues.push({ path: at('job'), message: `"${e.job}" is listed twice: a job runs on one event` });
      return;
    }
    jobs.add(e.job);
    const topic = topicKeyOf(sub.event);
    const before = topicOfEvent.get(e.event);
    if (before !== undefined && before !== topic)
      issues.push({ path: at('topic'), message: `event "${e.event}" is on topic "${before}" in another entry: an event has one topic` });
    topicOfEvent.set(e.event, topic);
    const queue = subscriberQueueNameFor(e.job, sub.event.fifo);
    if (queue.length > MAX_SUBSCRIBER_QUEUE_NAME)
      issues.push({
        path: at('job'),
        message: `its queue name "${queue}" is over ${MAX_SUBSCRIBER_QUEUE_NAME} characters (SQS allows 80 with "-dlq")`,
      });
    const clash = (
      [
        ['queue', queue],
        ['DLQ', dlqNameFor(queue)],
      ] as const
    ).find(([, name]) => taken.has(name));
    if (clash !== undefined)
      issues.push({ path: at('job'), message: `its ${clash[0]} "${clash[1]}" would also be ${taken.get(clash[1])}: rename the job` });
    else taken.set(queue, `job "${e.job}"'s queue`).set(dlqNameFor(queue), `job "${e.job}"'s DLQ`);
  });
  const own = stack.served.length;
  if (own + events.length > MAX_SERVED_QUEUES)
    issues.push({
      path: ['events'],
      message: `the workers would serve ${own + events.length} queues (${own} of the stack's own, ${events.length} subscribers'); the scaling alarm sums their depths and a CloudWatch alarm reads at most ${MAX_SERVED_QUEUES} metrics: list at most ${MAX_SERVED_QUEUES - own} subscribers`,
    });
  return issues;
}
