import type { AwsSettings } from '../config/env.js';
import type { MetricsSink } from '../ports/metrics-sink.js';

type MetricsSinkName = 'cloudwatch' | 'emf' | 'off';

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
