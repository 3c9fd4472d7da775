import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

/** SQS's metrics are per minute: every alarm and the scaling read them so. */
export const MINUTE = Duration.minutes(1);

/** How a metric of several queues is combined: summed (messages waiting) or the largest (an age). */
type Combine = 'sum' | 'max';

/**
 * A per-minute metric over `queues`: the one queue's itself, or a math expression over all of
 * them (`q0 + q1 + ...`, or `MAX([q0, q1, ...])`).
 */
export function acrossQueues(
  queues: readonly sqs.IQueue[],
  metric: (queue: sqs.IQueue) => cloudwatch.Metric,
  combine: Combine,
  label: string,
): cloudwatch.IMetric {
  if (queues.length === 1) return metric(queues[0]!);
  const usingMetrics = Object.fromEntries(queues.map((queue, i) => [`q${i}`, metric(queue)]));
  const ids = Object.keys(usingMetrics);
  const expression = combine === 'sum' ? ids.join(' + ') : `MAX([${ids.join(', ')}])`;
  return new cloudwatch.MathExpression({ expression, usingMetrics, label, period: MINUTE });
}
