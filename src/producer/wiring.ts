import { createSqsClient } from '../adapters/aws-clients.js';
import { MemcachedLock } from '../adapters/memcached-lock.js';
import { PauseWatch } from '../fleet/pause-watch.js';
import type { JobStore } from '../ports/job-store.js';
import { PauseCheck } from './pause-check.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { otelApi } from '../adapters/otel-api.js';
import { OtelSendTracing } from '../adapters/otel-send.js';
import type { SendTracing } from '../ports/tracing.js';
import { ConfigError } from '../core/errors.js';
import { queueAccountOf, resolveAwsSettings, resolveMemcached, resolveMemcachedSettings, type Env } from '../config/env.js';
import { resolveSnsSettings } from '../config/sns-endpoint.js';
import type { TopicPort } from '../ports/topics.js';
import type { eventsOptionSchema } from './publish.js';
import type { TopicSettings } from './publisher.js';
import type { QueuePort } from '../ports/queue.js';
import type { Allowances } from '../ports/allowances.js';
import type { JobLock } from '../ports/lock.js';
import { isFifoQueue } from '../core/queue-url.js';
import { Spillover, type SpilloverSettings } from './spillover.js';
import type { QueueCounts } from '../ports/queue-admin.js';
import { Admission, type admissionOptionsSchema } from './admission/admission.js';
import type { z } from 'zod';

/**
 * The producer's queue port: the one given, else the SDK adapter on a client made here (which
 * `close` destroys); and the queue's counts on that client, for admission.
 */
export function producerQueue(
  o: { readonly queue?: QueuePort; readonly endpoint?: string; readonly region?: string },
  env: Env,
): { queue: QueuePort; counts: ((queueUrl: string) => Promise<QueueCounts>) | undefined; close: () => void } {
  if (o.queue !== undefined) return { queue: o.queue, counts: undefined, close: () => {} };
  const client = createSqsClient(
    resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, { endpoint: 'options.endpoint', region: 'options.region' }),
    {},
    env,
  );
  const admin = new SqsQueueAdmin(client);
  return { queue: new SqsQueuePort(client), counts: (url) => admin.counts(url), close: () => client.destroy() };
}

/**
 * The workers' memcached as the producer uses it (admission's drain counts, shared spillover
 * allowances, cancel's mark): the `memcached` option or SQS_JOBS_MEMCACHED (with its TLS settings),
 * under their lockKeyPrefix. The client
 * is made when first asked for (at construction, when admission or spillover needs it; a malformed
 * address then throws there), once. `get` answers undefined when none is named.
 */
export function producerMemcached(
  o: { readonly memcached?: string | undefined; readonly lockKeyPrefix: string },
  env: Env,
): { get: () => MemcachedLock | undefined; close: () => void } {
  let lock: MemcachedLock | undefined;
  return {
    get: () => {
      if (lock !== undefined) return lock;
      const settings = resolveMemcachedSettings(o.memcached, env, 'options.memcached');
      if (settings !== undefined) lock = new MemcachedLock({ ...settings, keyPrefix: o.lockKeyPrefix });
      return lock;
    },
    close: () => lock?.close(),
  };
}

/** The producer's spillover (standard queues only), its allowance kept where producerAllowances says. */
export function producerSpillover(
  o: {
    readonly spillover?: SpilloverSettings & { readonly allowances?: Allowances | false };
    readonly lock?: JobLock;
    readonly tenantQueues?: Readonly<Record<string, string>>;
  },
  fifo: boolean,
  memcached: { get: () => MemcachedLock | undefined },
): Spillover | undefined {
  if (o.spillover === undefined) return undefined;
  if (fifo || isFifoQueue(o.spillover.queueUrl)) {
    throw new ConfigError(
      "invalid producer options: options.spillover: needs standard queues (a spillover queue would break a FIFO group's order)",
    );
  }
  return new Spillover(o.spillover, producerAllowances(o.spillover.allowances, o.lock, memcached), Object.keys(o.tenantQueues ?? {}));
}

/**
 * Where the spillover allowance is kept: the port given, else the workers' memcached (the `lock`
 * option when it is a MemcachedLock, else `memcached`), else (or `false`) this process.
 */
function producerAllowances(
  given: Allowances | false | undefined,
  lock: JobLock | undefined,
  memcached: { get: () => MemcachedLock | undefined },
): Allowances | undefined {
  if (given === false) return undefined;
  if (given !== undefined) return given;
  return lock instanceof MemcachedLock ? lock.allowances : memcached.get()?.allowances;
}

/**
 * The producer's admission: on the drain meter given, else on the workers' memcached, and on the
 * queue's counts.
 */
export function producerAdmission(
  settings: z.output<typeof admissionOptionsSchema>,
  memcached: { get: () => MemcachedLock | undefined },
  counts: ((queueUrl: string) => Promise<QueueCounts>) | undefined,
): { admission: Admission; close: () => void } {
  const queueCounts = settings.counts ?? counts;
  if (queueCounts === undefined) {
    throw new ConfigError(
      'invalid producer options: options.admission.counts: needed with a queue port of your own (how many messages wait)',
    );
  }
  const meter = settings.drains ?? memcached.get()?.drains;
  if (meter === undefined) {
    throw new ConfigError(
      "invalid producer options: options.admission: needs the workers' drain counts: set memcached (or SQS_JOBS_MEMCACHED) to the workers' memcached",
    );
  }
  const admission = new Admission(settings, {
    counts: queueCounts,
    drained: (url) => meter.read(url),
    held: (url, period) => meter.readHeld(url, period),
    kept: (url) => meter.keptCapacity(url),
    keep: (url, capacity) => meter.keepCapacity(url, capacity),
  });
  return { admission, close: () => admission.close() };
}

/** Whether a memcached is named (a malformed one is cancel()'s error to report, not the constructor's). */
export function hasMemcached(servers: string | undefined, env: Env): boolean {
  try {
    return resolveMemcached(servers, env, 'options.memcached') !== undefined;
  } catch {
    return false;
  }
}

/** The producer's topics: the port given, or SNS on a client of its own (made on first publish). */
export function producerTopics(
  o: z.output<typeof eventsOptionSchema>,
  fallbackEndpoint: string | undefined,
  region: string | undefined,
  queueUrl: string | undefined,
  env: Env,
  accountOption = 'options.events.account',
): { settings: TopicSettings; port: () => Promise<{ port: TopicPort; close: () => void }> } {
  const sns = resolveSnsSettings(
    { endpoint: o?.endpoint, region },
    env,
    { endpoint: 'options.events.endpoint', region: 'options.region' },
    fallbackEndpoint,
  );
  const settings = {
    region: sns.region,
    account: o?.account ?? (queueUrl === undefined ? undefined : queueAccountOf(queueUrl)),
    accountOption,
  };
  return {
    settings,
    port: async () => {
      if (o?.topics !== undefined) return { port: o.topics, close: () => {} };
      // Loaded on first publish: a producer that never publishes never loads the SNS client.
      const { createSnsClient, SnsTopics } = await import('../adapters/sns-topics.js');
      const client = createSnsClient(sns, {}, env);
      return { port: new SnsTopics(client), close: () => client.destroy() };
    },
  };
}

/** Send spans on OpenTelemetry when the app has `@opentelemetry/api` installed; undefined (no cost) when it has not. */
export function sendTracing(): SendTracing | undefined {
  const api = otelApi();
  return api === undefined ? undefined : new OtelSendTracing(api);
}

/**
 * What the producer shares with the fleet on the workers' memcached: admission, spillover, and the
 * pauses it refuses jobs for (`whilePaused: 'refuse'`, which needs the job store). One close for all.
 */
export function producerFleet(
  o: Parameters<typeof producerSpillover>[0] & {
    readonly admission?: z.output<typeof admissionOptionsSchema>;
    readonly whilePaused: 'accept' | 'refuse';
  },
  fifo: boolean,
  memcached: { get: () => MemcachedLock | undefined },
  counts: ((queueUrl: string) => Promise<QueueCounts>) | undefined,
  store: JobStore | undefined,
): { admission: Admission | undefined; spillover: Spillover | undefined; pauses: PauseCheck | undefined; close: () => void } {
  const controls = store?.controls;
  if (o.whilePaused === 'refuse' && controls === undefined)
    throw new ConfigError(
      "invalid producer options: options.whilePaused: 'refuse' needs the job store, where pauses are kept: set store or SQS_JOBS_JOB_TABLE",
    );
  const admission = o.admission === undefined ? undefined : producerAdmission(o.admission, memcached, counts);
  const spillover = producerSpillover(o, fifo, memcached);
  const pauses =
    o.whilePaused === 'refuse' && controls !== undefined
      ? new PauseCheck(new PauseWatch(controls, memcached.get()?.controls, unreadPauses()))
      : undefined;
  return {
    admission: admission?.admission,
    spillover,
    pauses,
    close: () => {
      admission?.close();
      pauses?.close();
    },
  };
}

/** How often a producer that refuses paused jobs warns that it cannot read them. */
const UNREAD_WARNING_MS = 300_000;

/**
 * A refusing producer that cannot read the pauses (the store down) refuses what it last read and
 * accepts the rest: it fails open, never refuses every job. Said as a process warning, at most every 5 minutes.
 */
function unreadPauses(): (error: unknown) => void {
  let warnedAt = 0;
  return (error) => {
    if (Date.now() - warnedAt < UNREAD_WARNING_MS) return;
    warnedAt = Date.now();
    const why = error instanceof Error ? error.message : String(error);
    process.emitWarning(`sqs-jobs: the pauses could not be read (${why}): jobs are refused by the last pauses read`, {
      code: 'SQS_JOBS_PAUSES_UNREAD',
    });
  };
}
