import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeploySettings } from './settings.js';

const minute = { period: Duration.minutes(1) };

/** One dashboard: enqueued vs dequeued, depth, per-job wait and process percentiles, fair-queue noise, spillover. */
export function addDashboard(
  scope: Construct,
  s: DeploySettings,
  queues: { readonly queue: sqs.IQueue; readonly deadLetterQueue: sqs.IQueue; readonly spilloverQueue: sqs.IQueue | undefined },
): cloudwatch.Dashboard {
  const { queue, deadLetterQueue, spilloverQueue } = queues;
  const depthOf = (q: sqs.IQueue, label: string) => q.metricApproximateNumberOfMessagesVisible({ ...minute, statistic: 'Maximum', label });
  const perMinute = { ...minute, statistic: 'Sum' };
  const perJob = (metric: string, stat: string) =>
    new cloudwatch.MathExpression({
      expression: `SEARCH('{"${s.metricsNamespace}",Job,Queue} MetricName="${metric}" Queue="${s.queueName}"', '${stat}', 60)`,
      label: `${metric} ${stat}`,
      ...minute,
      usingMetrics: {},
    });
  return new cloudwatch.Dashboard(scope, 'Dashboard', {
    dashboardName: `${s.queueName}-jobs`,
    widgets: [
      [
        new cloudwatch.GraphWidget({
          title: 'Enqueued vs dequeued per minute',
          left: [
            queue.metricNumberOfMessagesSent({ ...perMinute, label: 'enqueued' }),
            queue.metricNumberOfMessagesDeleted({ ...perMinute, label: 'dequeued (deleted)' }),
          ],
          width: 12,
        }),
        new cloudwatch.GraphWidget({
          title: 'Queue depth',
          left: [
            depthOf(queue, 'waiting'),
            queue.metricApproximateNumberOfMessagesNotVisible({ ...minute, statistic: 'Maximum', label: 'in flight' }),
            depthOf(deadLetterQueue, 'dead letters'),
          ],
          width: 12,
        }),
      ],
      [
        new cloudwatch.GraphWidget({
          title: 'Wait time per job (p50, p99)',
          left: [perJob('WaitTime', 'p50'), perJob('WaitTime', 'p99')],
          width: 12,
        }),
        new cloudwatch.GraphWidget({
          title: 'Process time per job (p50, p99)',
          left: [perJob('ProcessTime', 'p50'), perJob('ProcessTime', 'p99')],
          width: 12,
        }),
      ],
      [
        // SQS fair queues (tenant as MessageGroupId): how many tenants SQS sees as noisy, and how
        // long the quiet ones wait.
        new cloudwatch.GraphWidget({
          title: "SQS fair queues: noisy tenants, quiet tenants' oldest message",
          left: [queue.metric('ApproximateNumberOfNoisyGroups', { ...minute, statistic: 'Maximum', label: 'noisy tenants' })],
          right: [
            queue.metric('ApproximateAgeOfOldestMessageInQuietGroups', {
              ...minute,
              statistic: 'Maximum',
              label: 'oldest in quiet tenants (s)',
            }),
          ],
          width: 12,
        }),
        ...(spilloverQueue
          ? [new cloudwatch.GraphWidget({ title: 'Spillover queue depth', left: [depthOf(spilloverQueue, 'spilled, waiting')], width: 12 })]
          : []),
      ],
    ],
  });
}
