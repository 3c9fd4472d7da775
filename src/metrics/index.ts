import type { Logger } from 'pino';
import { createCloudWatchClient } from '../adapters/aws-clients.js';
import { resolveCloudWatchSettings, type AwsSettings, type Env } from '../config/env.js';
import { MetricsRecorder } from './recorder.js';
import { CloudWatchSink, EmfSink, type MetricsSink } from './sinks.js';

export type MetricsSinkName = 'cloudwatch' | 'emf' | 'off';

export interface MetricsSettings {
  readonly sink: MetricsSinkName | MetricsSink;
  readonly namespace: string;
  readonly flushIntervalMs: number;
  /**
   * Where the CloudWatch sink sends PutMetricData: `metrics.endpoint`, else
   * AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL; never the SQS endpoint.
   */
  readonly cloudwatch?: AwsSettings | undefined;
}

/**
 * The recorder for these settings, or undefined when metrics are off. `sqs` gives only the region
 * when `settings.cloudwatch` is not resolved yet: its endpoint is SQS's and is never used here.
 */
export function createMetricsRecorder(settings: MetricsSettings, sqs: AwsSettings, logger: Logger, env: Env): MetricsRecorder | undefined {
  if (settings.sink === 'off') return undefined;
  let sink: MetricsSink;
  let dispose = () => {};
  if (settings.sink === 'emf') sink = new EmfSink();
  else if (settings.sink === 'cloudwatch') {
    const cloudwatch = settings.cloudwatch ?? resolveCloudWatchSettings({ region: sqs.region }, env);
    const client = createCloudWatchClient(cloudwatch, { maxSockets: 4, requestTimeoutMs: 10_000 }, env);
    sink = new CloudWatchSink(client);
    dispose = () => client.destroy();
  } else sink = settings.sink;
  return new MetricsRecorder({ sink, namespace: settings.namespace, flushIntervalMs: settings.flushIntervalMs, logger, dispose });
}

export { MetricsRecorder } from './recorder.js';
export { CloudWatchSink, EmfSink, type MetricsSink } from './sinks.js';
export { MetricsAggregator, TIMING_METRICS, SIZE_METRICS, COUNT_METRICS } from './aggregator.js';
