import type { Logger } from 'pino';
import { queueNameOf } from '../config/env.js';
import type { WorkerEvents } from '../core/job-events.js';
import { MetricsAggregator } from './aggregator.js';
import type { MetricsSink } from '../ports/metrics-sink.js';

interface EventSource {
  on<K extends keyof WorkerEvents & string>(event: K, listener: (...args: WorkerEvents[K]) => void): unknown;
}

interface MetricsRecorderOptions {
  readonly sink: MetricsSink;
  readonly namespace: string;
  readonly flushIntervalMs: number;
  readonly logger: Logger;
  /** Called once by close(), after the last flush (e.g. to close the CloudWatch client). */
  readonly dispose?: () => void;
}

/**
 * Turns worker events into per-job metrics and flushes them at most once per interval and on
 * close. Metrics never block or break job processing: a failed flush is tried once more, then
 * dropped with a warning.
 */
export class MetricsRecorder {
  readonly #o: MetricsRecorderOptions;
  readonly #aggregator = new MetricsAggregator();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(options: MetricsRecorderOptions) {
    this.#o = options;
  }

  attach(source: EventSource): void {
    const a = this.#aggregator;
    const queue = (url: string) => queueNameOf(url);
    source.on('job:start', (e) => a.timing(e.jobName, queue(e.queueUrl), 'WaitTime', e.waitMs));
    source.on('job:succeeded', (e) => {
      a.timing(e.jobName, queue(e.queueUrl), 'ProcessTime', e.processMs);
      a.count(e.jobName, queue(e.queueUrl), 'Succeeded');
    });
    source.on('job:failed', (e) => {
      a.timing(e.jobName, queue(e.queueUrl), 'ProcessTime', e.processMs);
      a.count(e.jobName, queue(e.queueUrl), 'Failed');
      if (e.retryDelayMs !== undefined) a.count(e.jobName, queue(e.queueUrl), 'Retried');
    });
    source.on('job:dead-lettered', (e) => a.count(e.jobName, queue(e.queueUrl), 'DeadLettered'));
    // Every job:duplicate is a message deleted without running.
    source.on('job:duplicate', (e) => a.count(e.jobName, queue(e.queueUrl), 'DuplicatesSkipped'));
    source.on('job:resent', (e) => a.count(e.jobName, queue(e.queueUrl), 'Resent'));
    source.on('job:deferred', (e) => {
      a.count(e.jobName, queue(e.queueUrl), 'Deferred');
      if (e.limit === 'paused') a.count(e.jobName, queue(e.queueUrl), 'Paused');
    });
    source.on('job:waiting', (e) => {
      if (e.limit === 'paused') a.count(e.jobName, queue(e.queueUrl), 'Paused');
    });
    source.on('batch:start', (e) => {
      a.size(e.jobName, queue(e.queueUrl), 'BatchSize', e.size);
      a.timing(e.jobName, queue(e.queueUrl), 'BatchWait', e.heldMs);
    });
    source.on('job:lock-unavailable', (e) => a.count(e.jobName, queue(e.queueUrl), 'LockUnavailable'));
    // A schedule's, under its job: per schedule id, thousands of per-tenant schedules would each be a billed metric.
    source.on('schedule:fired', (e) => a.timing(e.jobName, queue(e.queueUrl), 'OccurrenceLateness', e.lateMs));
    source.on('schedule:skipped', (e) => a.count(e.jobName, queue(e.queueUrl), 'OccurrencesSkipped', e.count));
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.flush(), this.#o.flushIntervalMs);
    this.#timer.unref();
  }

  /** Send what has been gathered. Concurrent calls share one flush. */
  flush(): Promise<void> {
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Stop the timer and flush what is left. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    await this.flush();
    this.#o.dispose?.();
  }

  async #flush(): Promise<void> {
    if (this.#aggregator.isEmpty) return;
    const data = this.#aggregator.drain();
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        await this.#o.sink.publish(this.#o.namespace, data);
        return;
      } catch (error) {
        if (attempt === 2) this.#o.logger.warn({ err: error, datums: data.length }, 'could not publish metrics; this interval is dropped');
      }
    }
  }
}
