import type { EventRouting } from '../../core/envelope.js';
import { subscriberQueueNameFor, topicNameOf } from '../../core/event.js';
import type { AnyJob, JobRegistry } from '../../core/job.js';
import { queueNameOf } from '../../core/queue-url.js';

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
    .filter((job): job is AnyJob => job.kind === 'sqs-jobs/job' && job.on !== undefined);
  const topics = new Set(subscribers.map((job) => job.on!.event.topicArn ?? job.on!.event.topic));
  const queue = queueNameOf(queueUrl).replace(/\.fifo$/, '');
  return {
    topicAllowed: (arn) => topics.has(arn) || topics.has(topicNameOf(arn)),
    subscriber: (event) => {
      const candidates = subscribers.filter((job) => job.on!.event.name === event);
      if (candidates.length === 1) return candidates[0]!.name;
      const own = candidates.find((job) => subscriberQueueNameFor(job.name) === queue);
      if (own !== undefined) return own.name;
      return candidates.length === 0
        ? { reason: 'unknown-job', detail: `no job here subscribes to the event "${event}"` }
        : {
            reason: 'unknown-job',
            detail: `several jobs here subscribe to the event "${event}" (${candidates.map((j) => j.name).join(', ')}) and this queue is named after none of them: give each its own queue, named after it (provisionEvents does)`,
          };
    },
  };
}
