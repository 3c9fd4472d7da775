import { type AnyEvent, ATTR_EVENT, defaultTopicOf, type Subscription, subscriberQueueNameFor } from '../core/event.js';
import { SqsJobsError, toError } from '../core/errors.js';
import type { AnyDefinition, AnyJob } from '../core/job.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import type { TopicAdmin } from '../ports/topics.js';
import { sameJson } from '../core/same-json.js';
import { provisionQueues, type QueueChange, type QueueSpec } from './queues.js';

/** What provisionEvents did, besides the queues' own changes. */
export type EventChange =
  | { readonly topic: string; readonly change: 'created' }
  | { readonly queue: string; readonly change: 'policy set' }
  | { readonly topic: string; readonly queue: string; readonly change: 'subscribed' | 'subscription changed' };

/** A job that runs on an event, as set up: its event's topic, its own queue and DLQ, and its SNS subscription. */
interface SubscriberQueue {
  readonly job: string;
  readonly event: string;
  readonly topicArn: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly subscriptionArn: string;
}

/** What createEvents answers: each subscriber's queue, and every topic, queue, policy and subscription created or changed, in order. */
export interface EventsProvisioned {
  readonly subscribers: readonly SubscriberQueue[];
  readonly changes: readonly (EventChange | QueueChange)[];
}

/**
 * Make what the jobs that run on events need: each event's topic; each subscriber's queue (named
 * after the job) with its DLQ; a queue policy that lets only its topic send to it; the subscription,
 * with raw delivery and the job's filter policy. Idempotent: what exists and is right is left as
 * it is; other settings (and other subscriptions) are never touched. `queue` is the settings every
 * subscriber queue gets (as `sqs-jobs queues create` takes them).
 */
export async function provisionEvents(
  admin: QueueAdmin,
  topics: TopicAdmin,
  jobs: readonly AnyDefinition[],
  queue: Omit<QueueSpec, 'name' | 'spillover' | 'tiers'> = {},
): Promise<EventsProvisioned> {
  const subscribers = jobs.filter((j): j is AnyJob & { on: Subscription } => j.kind === 'sqs-jobs/job' && j.on !== undefined);
  // Each subscriber's queue is its own: two jobs whose names map to one queue name would share it.
  const byQueue = new Map<string, string>();
  for (const job of subscribers) {
    const name = subscriberQueueNameFor(job.name, job.on.event.fifo);
    const other = byQueue.get(name);
    if (other !== undefined)
      throw new SqsJobsError(
        'QUEUE_SETUP_FAILED',
        `jobs "${other}" and "${job.name}" would share the subscriber queue "${name}": rename one`,
      );
    if (name.length > MAX_SUBSCRIBER_QUEUE_NAME)
      throw new SqsJobsError(
        'QUEUE_SETUP_FAILED',
        `job "${job.name}": its queue name "${name}" is over ${MAX_SUBSCRIBER_QUEUE_NAME} characters (SQS allows 80 with "-dlq")`,
      );
    byQueue.set(name, job.name);
  }
  const changes: (EventChange | QueueChange)[] = [];
  const topicArns = new Map<AnyEvent, string>();
  const out: SubscriberQueue[] = [];
  for (const job of subscribers) {
    const event = job.on.event;
    try {
      let topicArn = event.topicArn ?? topicArns.get(event);
      if (topicArn === undefined) {
        const made = await topics.createTopic(event.topic);
        topicArn = made.topicArn;
        if (made.created) changes.push({ topic: event.topic, change: 'created' });
      }
      topicArns.set(event, topicArn);
      const name = subscriberQueueNameFor(job.name, event.fifo);
      const pair = await provisionQueues(admin, { ...queue, name });
      changes.push(...pair.changes);
      const policy = queuePolicy(pair.queueArn, topicArn);
      if (!sameJson(await admin.policy(pair.queueUrl), policy)) {
        await admin.setPolicy(pair.queueUrl, policy);
        changes.push({ queue: name, change: 'policy set' });
      }
      const settings = { rawMessageDelivery: true, filterPolicy: filterPolicyOf(job.on) };
      const existing = (await topics.subscriptions(topicArn)).find((s) => s.protocol === 'sqs' && s.endpoint === pair.queueArn);
      let subscriptionArn: string;
      if (existing === undefined) {
        subscriptionArn = await topics.subscribeQueue(topicArn, pair.queueArn, settings);
        changes.push({ topic: event.topic, queue: name, change: 'subscribed' });
      } else {
        subscriptionArn = existing.subscriptionArn;
        const now = await topics.subscriptionSettings(subscriptionArn);
        if (now.rawMessageDelivery !== settings.rawMessageDelivery || !sameJson(now.filterPolicy, settings.filterPolicy)) {
          await topics.applySubscriptionSettings(subscriptionArn, settings);
          changes.push({ topic: event.topic, queue: name, change: 'subscription changed' });
        }
      }
      out.push({ job: job.name, event: event.name, topicArn, queueUrl: pair.queueUrl, dlqUrl: pair.dlqUrl, subscriptionArn });
    } catch (error) {
      if (error instanceof SqsJobsError) throw error;
      const e = toError(error);
      throw new SqsJobsError('QUEUE_SETUP_FAILED', `could not set up job "${job.name}" on event "${event.name}": ${e.name}: ${e.message}`, {
        cause: error,
      });
    }
  }
  return { subscribers: out, changes };
}

/** SQS queue names are at most 80 characters; the DLQ's adds "-dlq". */
const MAX_SUBSCRIBER_QUEUE_NAME = 76;

/**
 * A subscription's filter policy: the job's, and, on a topic the event shares with others (one
 * named by `topic` or `topicArn`), the event's name (`sqsjobs-event`), so the queue gets only its
 * event. An event on a topic of its own needs no filter.
 */
export function filterPolicyOf(on: Pick<Subscription, 'event' | 'filter'>): string | undefined {
  const e = on.event;
  const own = e.topicArn === undefined && e.topic === defaultTopicOf(e.name, e.fifo);
  const policy = { ...(own ? {} : { [ATTR_EVENT]: [e.name] }), ...on.filter };
  if (Object.keys(policy).length > 5)
    throw new SqsJobsError(
      'QUEUE_SETUP_FAILED',
      `the filter policy ${JSON.stringify(policy)} names more than 5 attributes (SNS limit; on a shared topic, sqsjobs-event is one)`,
    );
  return Object.keys(policy).length === 0 ? undefined : JSON.stringify(policy);
}

/** A queue policy that lets SNS send to the queue only from `topicArn` (aws:SourceArn). */
export function queuePolicy(queueArn: string, topicArn: string): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'sqs-jobs-subscription',
        Effect: 'Allow',
        Principal: { Service: 'sns.amazonaws.com' },
        Action: 'sqs:SendMessage',
        Resource: queueArn,
        Condition: { ArnEquals: { 'aws:SourceArn': topicArn } },
      },
    ],
  });
}
