import type { Logger } from 'pino';
import { createCloudWatchClient } from '../aws/clients.js';
import type { AwsSettings, Env } from '../config.js';
import { MetricsRecorder } from './recorder.js';
import { CloudWatchSink, EmfSink, type MetricsSink } from './sinks.js';

export type MetricsSinkName = 'cloudwatch' | 'emf' | 'off';

export interface MetricsSettings {
  readonly sink: MetricsSinkName | MetricsSink;
  readonly namespace: string;
  readonly flushIntervalMs: number;
}

/** The recorder for these settings, or undefined when metrics are off. */
export function createMetricsRecorder(settings: MetricsSettings, aws: AwsSettings, logger: Logger, env: Env): MetricsRecorder | undefined {
  if (settings.sink === 'off') return undefined;
  let sink: MetricsSink;
  let dispose = () => {};
  if (settings.sink === 'emf') sink = new EmfSink();
  else if (settings.sink === 'cloudwatch') {
    const client = createCloudWatchClient(aws, { maxSockets: 4, requestTimeoutMs: 10_000 }, env);
    sink = new CloudWatchSink(client);
    dispose = () => client.destroy();
  } else sink = settings.sink;
  return new MetricsRecorder({ sink, namespace: settings.namespace, flushIntervalMs: settings.flushIntervalMs, logger, dispose });
}

export { MetricsRecorder } from './recorder.js';
export { CloudWatchSink, EmfSink, type MetricsSink } from './sinks.js';
export { MetricsAggregator, TIMING_METRICS, COUNT_METRICS } from './aggregator.js';
