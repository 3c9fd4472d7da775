import { ConfigError } from '../core/errors.js';
import { type AnyEvent, subscriberQueueNameFor } from '../core/event.js';
import { createEvents } from '../ops/wiring.js';
import { createPublisher } from '../producer/create-publisher.js';
import { type AwsFlags, type CliContext, integer, jsonFlag } from './commands.js';
import { loadEvents, loadJobs } from './load-jobs.js';
import { renderEventChanges } from './render.js';

interface EventsCreateFlags extends AwsFlags {
  readonly jobs?: string;
  readonly maxReceiveCount?: string;
  readonly visibilityTimeout?: string;
  readonly json?: boolean;
}

/** `sqs-jobs events create`: topics, subscriber queues, policies and subscriptions for the jobs a module exports. */
export async function eventsCreate(flags: EventsCreateFlags, { out, env }: CliContext): Promise<void> {
  if (flags.jobs === undefined) throw new ConfigError('events create needs --jobs <module> (a module that exports jobs defined with `on`)');
  const maxReceiveCount = integer(flags.maxReceiveCount, '--max-receive-count');
  const visibilityTimeout = integer(flags.visibilityTimeout, '--visibility-timeout');
  const registry = await loadJobs(flags.jobs);
  const jobs = registry.names().map((name) => registry.get(name));
  if (!jobs.some((j) => j.kind === 'sqs-jobs/job' && j.on !== undefined)) {
    throw new ConfigError(`${flags.jobs} exports no job that runs on an event (defineJob({ on: event }))`);
  }
  const made = await createEvents(
    jobs,
    {
      queue: { maxReceiveCount, visibilityTimeout },
      ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint }),
      ...(flags.region === undefined ? {} : { region: flags.region }),
    },
    env,
  );
  if (flags.json) {
    out(JSON.stringify(made));
    return;
  }
  for (const s of made.subscribers) out(`${s.event} → ${s.job}: ${s.queueUrl}  (dlq ${s.dlqUrl.split('/').at(-1)})`);
  out(renderEventChanges(made.changes));
}

interface PublishFlags extends AwsFlags {
  readonly jobs?: string;
  readonly payload: string;
  readonly id?: string;
  readonly tenant?: string;
  readonly groupId?: string;
  readonly attribute?: string[];
  readonly account?: string;
}

/** `sqs-jobs publish <event>`: check the payload by the event's schema and publish it to the event's topic. */
export async function publishCommand(name: string, flags: PublishFlags, { out, env }: CliContext): Promise<void> {
  if (flags.jobs === undefined) throw new ConfigError('publish needs --jobs <module> (a module that exports the event, or a job on it)');
  const payload = jsonFlag(flags.payload, '--payload');
  const attributes: Record<string, string> = {};
  for (const pair of flags.attribute ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ConfigError(`--attribute ${JSON.stringify(pair)}: must be name=value`);
    attributes[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const events = await loadEvents(flags.jobs);
  const event: AnyEvent | undefined = events.get(name);
  if (event === undefined) {
    const known = [...events.keys()].sort().join(', ') || 'none';
    throw new ConfigError(`${flags.jobs} has no event "${name}" (its events: ${known})`);
  }
  const publisher = createPublisher({ endpoint: flags.endpoint, region: flags.region, account: flags.account }, env);
  try {
    const result = await publisher.publish(event, payload as never, {
      id: flags.id,
      tenant: flags.tenant,
      groupId: flags.groupId,
      ...(flags.attribute === undefined ? {} : { attributes }),
    });
    out(JSON.stringify(result));
  } finally {
    publisher.close();
  }
}

/** Each job a module exports that runs on an event, with its queue's name. */
export async function subscribersOf(module: string): Promise<{ event: string; job: string; queue: string }[]> {
  const registry = await loadJobs(module);
  const found = registry.names().flatMap((name) => {
    const job = registry.get(name);
    return job.kind === 'sqs-jobs/job' && job.on !== undefined
      ? [{ event: job.on.event.name, job: job.name, queue: subscriberQueueNameFor(job.name, job.on.event.fifo) }]
      : [];
  });
  if (found.length === 0) throw new ConfigError(`--jobs: ${module} exports no job that runs on an event (defineJob({ on: event }))`);
  return found;
}
