import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DeploySettings } from './settings.js';

/** The alarms `SqsJobs` creates (`jobs.alarms`), and the SNS topic they notify when `alarmEmail` is set. */
export interface JobAlarms {
  /** Any message in the DLQ: a job that failed for good or could not be read. */
  readonly deadLetters: cloudwatch.Alarm;
  /** The oldest waiting message is older than `oldestMessageSlaSeconds`. */
  readonly oldestMessage: cloudwatch.Alarm;
  /** With `alarmEmail`: the topic every alarm notifies. */
  readonly topic: sns.Topic | undefined;
}

/** The two alarms an operator needs first; with `alarmEmail`, they (and `more`) notify it through a topic. */
export function addAlarms(
  scope: Construct,
  s: DeploySettings,
  queues: { readonly queue: sqs.IQueue; readonly deadLetterQueue: sqs.IQueue },
  more: readonly cloudwatch.Alarm[],
): JobAlarms {
  const deadLetters = new cloudwatch.Alarm(scope, 'DeadLettersAlarm', {
    alarmName: `${s.queueName}-dead-letters`,
    alarmDescription: `Messages in ${s.queueName}-dlq: jobs that failed for good or could not be read. Run \`sqs-jobs dlq list\`, fix the cause, then \`sqs-jobs dlq replay\`.`,
    metric: queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const oldestMessage = new cloudwatch.Alarm(scope, 'OldestMessageAlarm', {
    alarmName: `${s.queueName}-oldest-message`,
    alarmDescription: `The oldest message in ${s.queueName} is older than ${s.oldestMessageSlaSeconds} s: jobs wait too long. Check WaitTime vs ProcessTime per job, task count against maxTasks, and failing handlers.`,
    metric: queues.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
    threshold: s.oldestMessageSlaSeconds,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 3,
    datapointsToAlarm: 2,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  let topic: sns.Topic | undefined;
  if (s.alarmEmail !== undefined) {
    topic = new sns.Topic(scope, 'AlarmTopic');
    topic.addSubscription(new subscriptions.EmailSubscription(s.alarmEmail));
    for (const alarm of [deadLetters, oldestMessage, ...more]) alarm.addAlarmAction(new cwActions.SnsAction(topic));
  }
  return { deadLetters, oldestMessage, topic };
}
