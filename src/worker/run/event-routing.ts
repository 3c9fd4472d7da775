import type { EventRouting } from '../../core/envelope.js';
import { type AnyEvent, type Subscription, subscriberQueueNameFor, topicNameOf } from '../../core/event.js';
import type { AnyJob } from '../../core/job.js';
import type { JobRegistry } from '../../core/job-registry.js';
import { queueAccountOf, queueNameOf } from '../../core/queue-url.js';

const cache = new WeakMap<JobRegistry, Map<string, EventRouting>>();

/**
 * How a worker reads events on `queueUrl`: a notification only from a topic of an event one of its
 * jobs subscribes to; an event runs the job here that subscribes to it, or, where several do, the
 * one whose queue this is (named after the job, as `provisionEvents` makes it). Made once per queue.
 */
export function eventRoutingFor(jobs: JobRegistry, queueUrl: string): EventRouting {
  let byQueue = cache.get(jobs);
  if (byQueue === undefined) {
    byQueue = new Map();
    cache.set(jobs, byQueue);
  }
  let routing = byQueue.get(queueUrl);
  if (routing === undefined) {
    routing = routingOf(jobs, queueUrl);
    byQueue.set(queueUrl, routing);
  }
  return routing;
}

function routingOf(jobs: JobRegistry, queueUrl: string): EventRouting {
  const subscribers = jobs
    .names()
    .map((name) => jobs.get(name))
    .filter((job): job is AnyJob & { on: Subscription } => job.kind === 'sqs-jobs/job' && job.on !== undefined);
  const account = queueAccountOf(queueUrl);
  const queue = queueNameOf(queueUrl).replace(/\.fifo$/, '');
  /** Whether a notification from `arn` may carry `event`: its exact ARN, or its topic's name in this queue's account. */
  const fromTopicOf = (arn: string, event: AnyEvent) =>
    event.topicArn !== undefined
      ? arn === event.topicArn
      : topicNameOf(arn) === event.topic && (account === undefined || arn.split(':')[4] === account);
  return {
    topicAllowed: (arn) => subscribers.some((job) => fromTopicOf(arn, job.on.event)),
    subscriber: (event, topicArn) => {
      const candidates = subscribers.filter(
        (job) => job.on.event.name === event && (topicArn === undefined || fromTopicOf(topicArn, job.on.event)),
      );
      // The queue named after a subscriber is that subscriber's; else the only one here, if one.
      const own = candidates.find((job) => subscriberQueueNameFor(job.name) === queue);
      if (own !== undefined) return own.name;
      const queueOfAnother = subscribers.some((job) => subscriberQueueNameFor(job.name) === queue);
      if (candidates.length === 1 && !queueOfAnother) return candidates[0]!.name;
      if (candidates.length === 0)
        return {
          reason: 'unknown-job',
          detail: `no job here subscribes to the event "${event}"${topicArn === undefined ? '' : ` from ${topicArn}`}`,
        };
      return {
        reason: 'unknown-job',
        detail: queueOfAnother
          ? `the event "${event}" came to the queue of a job that does not subscribe to it`
          : `several jobs here subscribe to the event "${event}" (${candidates.map((j) => j.name).join(', ')}) and this queue is named after none of them: give each its own queue, named after it (provisionEvents does)`,
      };
    },
  };
}
