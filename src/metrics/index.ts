import type { AwsSettings } from '../config/env.js';
import type { MetricsSink } from '../ports/metrics-sink.js';

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

export { MetricsRecorder } from './recorder.js';
export { EmfSink } from './emf-sink.js';
export { MetricsAggregator, TIMING_METRICS, SIZE_METRICS, COUNT_METRICS } from './aggregator.js';
