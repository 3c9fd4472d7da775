import type { Logger } from 'pino';
import { MemcachedLock } from '../adapters/memcached-lock.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { createSqsClient } from '../adapters/aws-clients.js';
import { otelApi } from '../adapters/otel-api.js';
import { OtelProcessTracing } from '../adapters/otel-process.js';
import type { ProcessTracing } from '../ports/tracing.js';
import type { Env } from '../config/env.js';
import type { SafeEmitter } from '../core/events.js';
import type { WorkerEvents } from '../core/job-events.js';
import { MetricsRecorder } from '../metrics/recorder.js';
import { resolveMetricsSink } from '../metrics/wiring.js';
import { type JobLock, NoLock } from '../ports/lock.js';
import type { QueuePort } from '../ports/queue.js';
import { actsOn, type Acts } from './fate/acts.js';
import { DeleteCoalescer, ResendCoalescer, VisibilityCoalescer } from './fate/coalescers.js';
import { DrainTally } from './drain-tally.js';
import { TenantTally } from './tenant-tally.js';

/** How often a worker adds its deletes to the drain meter. */
const DRAIN_FLUSH_MS = 1_000;
/** How often a worker reports its tenants' figures to the tenant meter. */
const TENANT_FLUSH_MS = 15_000;
import { Heartbeat } from './hold/heartbeat.js';
import type { WorkerConfig } from './config.js';
import type { QueueState } from './queue-state.js';
import type { OnError, WorkerContext } from './context.js';
import { hostname } from 'node:os';
import { createProducer, type Producer } from '../producer/producer.js';
import { resolveJobStore } from '../status/wiring.js';
import { guardedLock, guardedPermits, guardedRateLimits } from './guarded-ports.js';
import { StatusTracker } from '../status/tracker.js';
import { StoredCancels } from '../status/stored-cancels.js';
import { EVERY_WORKER } from '../ports/tick-rota.js';
import { type ScheduleTicks, scheduleTicks } from './schedule-ticks.js';
import { PauseWatch } from '../fleet/pause-watch.js';
import { WorkerPauses } from './pauses.js';

/** Build a worker's context: its ports from the options (or the SDKs), and the services on them. */
export function buildContext(
  c: WorkerConfig,
  env: Env,
  log: Logger,
  events: SafeEmitter<WorkerEvents>,
  queues: readonly QueueState[],
  onError: OnError,
): { ctx: WorkerContext; acts: Acts; ticks: ScheduleTicks | undefined } {
  let sqs = c.queue;
  let closeClients = () => {};
  if (sqs === undefined) {
    // Long polls on their own socket pool, so a 20-second poll never delays a delete or a heartbeat.
    const poll = createSqsClient(
      c.aws,
      { maxSockets: c.queues.length * c.receiveConcurrency * 2, requestTimeoutMs: (c.waitTimeSeconds + 10) * 1000 },
      env,
    );
    const control = createSqsClient(c.aws, { maxSockets: 50, requestTimeoutMs: 10_000 }, env);
    sqs = new SqsQueuePort(poll, control);
    closeClients = () => {
      poll.destroy();
      control.destroy();
    };
  }
  const onAvailability = (up: boolean, error?: Error) => {
    if (up) {
      log.info('memcached reachable again: dedupe lock restored');
      events.emit('lock:restored');
      return;
    }
    const e = error ?? new Error('memcached unavailable');
    const what = c.lockFailClosed
      ? 'memcached unreachable: jobs stay queued until it returns (lockFailClosed)'
      : 'memcached unreachable: running jobs without the dedupe lock (at-least-once) until it returns';
    log.warn({ err: e }, what);
    events.emit('lock:unavailable', { error: e });
  };
  const chosenLock =
    c.lock ??
    (c.memcached === undefined
      ? new NoLock()
      : new MemcachedLock({ ...c.memcached, keyPrefix: c.lockKeyPrefix, timeoutMs: c.lockTimeoutMs, onAvailability }));
  // The permits: the option, else those on the memcached the lock uses.
  const chosenPermits = c.permits ?? (chosenLock instanceof MemcachedLock ? chosenLock.permits : undefined);
  const lock = guardedLock(chosenLock);
  const permits = chosenPermits === undefined ? undefined : guardedPermits(chosenPermits);
  const chosenRates = c.rateLimits ?? (chosenLock instanceof MemcachedLock ? chosenLock.rates : undefined);
  const rates = chosenRates === undefined ? undefined : guardedRateLimits(chosenRates);
  const exclusive = c.jobs.names().filter((name) => {
    const job = c.jobs.get(name);
    return job.kind === 'sqs-jobs/batch-job' && job.exclusive;
  });
  if (exclusive.length > 0 && permits === undefined) {
    log.warn(
      { jobs: exclusive },
      'exclusive batch jobs need permits (memcached, or the permits option): without them two flushes of one key may run at once',
    );
  }
  const limited = c.jobs.names().filter((name) => c.jobs.get(name).rateLimit !== undefined);
  if (limited.length > 0 && rates === undefined) {
    log.warn({ jobs: limited }, 'rate limits need memcached (or the rateLimits option): without it these jobs start as fast as slots free');
  }
  if (Object.keys(c.tenantCaps).length > 0 && permits === undefined) {
    log.warn({ tenantCaps: c.tenantCaps }, 'tenantCaps need permits (memcached, or the permits option): without them no cap is enforced');
  }
  const heartbeat = new Heartbeat({
    sqs,
    lock,
    permits,
    visibilityTimeoutSeconds: c.visibilityTimeoutSeconds,
    intervalMs: c.heartbeatIntervalMs,
    lockTtlSeconds: c.lockTtlSeconds,
    onError: (error) => onError('heartbeat', error),
    onLost: (lease, reason) => {
      if (lease.info === undefined) return; // not started: nothing ran, the message is simply back in the queue
      log.warn(
        { jobId: lease.info.jobId, messageId: lease.info.messageId, reason },
        'lease lost: aborting handler; this worker will not delete the message',
      );
      events.emit('heartbeat:lost', { ...lease.info, reason });
    },
  });
  // The drain meter: the option, else the one on the lock's memcached (producers' admission reads it).
  const meter = c.drains ?? (chosenLock instanceof MemcachedLock ? chosenLock.drains : undefined);
  const drains = meter === undefined ? undefined : new DrainTally(meter, DRAIN_FLUSH_MS);
  // The tenant meter likewise (the dashboard's tenants page reads it); false: none.
  const tenantMeter = c.tenantMeter ?? (chosenLock instanceof MemcachedLock ? chosenLock.tenants : false);
  const tenants = tenantMeter === false ? undefined : new TenantTally(tenantMeter, { flushMs: TENANT_FLUSH_MS, caps: c.tenantCaps });
  const deletes = new DeleteCoalescer({
    sqs,
    flushMs: c.deleteFlushMs,
    ...(drains === undefined ? {} : { onConfirmed: (queueUrl: string, count: number) => drains.count(queueUrl, count) }),
    onFailure: (m, reason) =>
      onError('delete', new Error(`could not delete message ${m.messageId} from ${m.queueUrl}: ${reason}; it will be delivered again`)),
  });
  // Settle reports a hand-back or a re-send SQS refused: what it means depends on why it was made.
  const visibility = new VisibilityCoalescer({ sqs, flushMs: c.deleteFlushMs });
  const resends = new ResendCoalescer({ sqs, flushMs: c.deleteFlushMs });
  const tracing = c.tracing ? processTracing() : undefined;
  const status = buildStatus(c, env, log, sqs, lock, onError, tracing);
  const close = () => {
    closeClients();
    status?.close();
  };
  // The pauses kept in the job store, asked after each second on the lock's memcached.
  const controls = c.pauses ? status?.store.controls : undefined;
  const notices = chosenLock instanceof MemcachedLock ? chosenLock.controls : undefined;
  const pauses = controls && new WorkerPauses(new PauseWatch(controls, notices, (error) => onError('pauses', error)), log);
  const byUrl = new Map(queues.map((q) => [q.url, q]));
  const ctx: WorkerContext = {
    config: c,
    report: { emit: events.emit.bind(events), log, onError },
    stop: new AbortController(),
    force: new AbortController(),
    sqs,
    lock,
    permits,
    rates,
    heartbeat,
    drains,
    tenants,
    metrics: metricsRecorder(c, log, env),
    status,
    pauses,
    tracing,
    queueOf: (url) => {
      const q = byUrl.get(url);
      if (q === undefined) throw new Error(`no queue ${url} in this worker`);
      return q;
    },
    closeClients: close,
  };
  // Which worker reads each shard of the due index each second: one of the fleet, on the lock's memcached.
  const rota = chosenLock instanceof MemcachedLock ? chosenLock.ticks : EVERY_WORKER;
  const ticks = c.schedules
    ? scheduleTicks(ctx, status && { store: status.store, producer: status.fanOut.producer, queue: sqs }, rota)
    : undefined;
  return { ctx, acts: actsOn(sqs, { deletes, visibility, resends }), ticks };
}

/** The job store's parts, when one is configured: the tracker, and producers for fan-out children (one per queue). */
function buildStatus(
  c: WorkerConfig,
  env: Env,
  log: Logger,
  sqs: QueuePort,
  lock: JobLock,
  onError: OnError,
  tracing: ProcessTracing | undefined,
) {
  const store = resolveJobStore(c.store, env);
  if (store === undefined) return undefined;
  // A claimed completion not sent within this long was claimed by a worker that died.
  const reclaimAfterMs = c.lockTtlSeconds * 1000 * 2;
  const tracker = new StatusTracker({
    store,
    worker: `${hostname()}:${process.pid}`,
    progressIntervalMs: c.progressIntervalMs,
    runningAfterMs: c.progressIntervalMs,
    onError,
  });
  const producers = new Map<string, Producer>();
  const producer = (queueUrl: string) => {
    let p = producers.get(queueUrl);
    if (p === undefined) {
      // Through the worker's own queue port: no SDK client of its own.
      p = createProducer({ queueUrl, jobs: c.jobs, queue: sqs, store, tracing: c.tracing }, env);
      producers.set(queueUrl, p);
    }
    return p;
  };
  return {
    tracker,
    store,
    cancels: new StoredCancels(store, lock),
    fanOut: { store, producer, jobs: c.jobs, reclaimAfterMs, logger: log, onError, tracing },
    close: () => {
      for (const p of producers.values()) p.close();
      // A store handed in (options.store) is the caller's to close.
      if (store !== c.store) store.close();
    },
  };
}

/** The worker's metrics recorder on the sink its settings name, or undefined when metrics are off. */
function metricsRecorder(c: WorkerConfig, log: Logger, env: Env): MetricsRecorder | undefined {
  const chosen = resolveMetricsSink(c.metrics, c.aws, env);
  if (chosen === undefined) return undefined;
  const { namespace, flushIntervalMs } = c.metrics;
  return new MetricsRecorder({ sink: chosen.sink, namespace, flushIntervalMs, logger: log, dispose: chosen.dispose });
}

/** Process spans on OpenTelemetry when the app has `@opentelemetry/api` installed; undefined (no cost) when it has not. */
function processTracing(): ProcessTracing | undefined {
  const api = otelApi();
  return api === undefined ? undefined : new OtelProcessTracing(api);
}
