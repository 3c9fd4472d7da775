import { createCloudWatchClient } from '../adapters/aws-clients.js';
import { CloudWatchSink } from '../adapters/cloudwatch-sink.js';
import { type AwsSettings, type Env, resolveCloudWatchSettings } from '../config/env.js';
import type { MetricsSink } from '../ports/metrics-sink.js';
import { EmfSink } from './emf-sink.js';
import type { MetricsSettings } from './settings.js';

/**
 * The sink the settings name, with what closes it, or undefined when metrics are off. `sqs` gives
 * only the region when `settings.cloudwatch` is not resolved yet: its endpoint is SQS's and is
 * never used here.
 */
export function resolveMetricsSink(
  settings: MetricsSettings,
  sqs: AwsSettings,
  env: Env,
): { readonly sink: MetricsSink; readonly dispose: () => void } | undefined {
  if (settings.sink === 'off') return undefined;
  if (settings.sink === 'emf') return { sink: new EmfSink(), dispose: () => {} };
  if (settings.sink === 'cloudwatch') {
    const cloudwatch = settings.cloudwatch ?? resolveCloudWatchSettings({ region: sqs.region }, env);
    const client = createCloudWatchClient(cloudwatch, { maxSockets: 4, requestTimeoutMs: 10_000 }, env);
    return { sink: new CloudWatchSink(client), dispose: () => client.destroy() };
  }
  return { sink: settings.sink, dispose: () => {} };
}
