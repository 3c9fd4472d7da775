import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { backlogThreshold, laneSlas, retentionThresholds } from './alarm-thresholds.js';
import { acrossQueues, MINUTE } from './queue-metrics.js';
import type { DeploySettings } from './settings.js';

/**
 * The alarms `SqsJobs` creates (`jobs.alarms`), and the SNS topic they notify when `alarmEmail` is
 * set: the playbook's three (dead letters, a backlog, the oldest message against the SLA), each
 * lane's oldest message against its own SLA, and a message about to outlive its retention.
 */
export interface JobAlarms {
  /** Any message in the DLQ: a job that failed for good or could not be read. */
  readonly deadLetters: cloudwatch.Alarm;
  /** The queue's (the normal lane's) oldest waiting message is older than `oldestMessageSlaSeconds`. */
  readonly oldestMessage: cloudwatch.Alarm;
  /** With tiers: the high and the low lane's oldest message older than its own SLA (`laneSlaSeconds`). */
  readonly lanes: { readonly high: cloudwatch.Alarm; readonly low: cloudwatch.Alarm } | undefined;
  /** More than `backlogAlarmMessages` wait (the queue, its spillover queue and lanes together) for 5 minutes. */
  readonly backlog: cloudwatch.Alarm;
  /** A message of the queue (its spillover queue, its lanes) is `retentionWarningSeconds` from being deleted unread. */
  readonly retention: cloudwatch.Alarm;
  /** A message of the DLQ is `retentionWarningSeconds` from being deleted unread, counting the time it spent before its move. */
  readonly deadLetterRetention: cloudwatch.Alarm;
  /** With `alarmEmail`: the topic every alarm notifies. */
  readonly topic: sns.Topic | undefined;
}

/** The queues the alarms watch. */
interface WatchedQueues {
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly spilloverQueue: sqs.IQueue | undefined;
  readonly lanes: { readonly high: sqs.IQueue; readonly low: sqs.IQueue } | undefined;
}

/** Every alarm an operator needs; with `alarmEmail`, they (and `more`) notify it through a topic. */
export function addAlarms(scope: Construct, s: DeploySettings, q: WatchedQueues, more: readonly cloudwatch.Alarm[]): JobAlarms {
  const name = s.queueName;
  const own = [q.queue, ...(q.spilloverQueue ? [q.spilloverQueue] : []), ...(q.lanes ? [q.lanes.high, q.lanes.low] : [])];
  const deadLetters = new cloudwatch.Alarm(scope, 'DeadLettersAlarm', {
    alarmName: `${name}-dead-letters`,
    alarmDescription: `Messages in ${name}-dlq: jobs that failed for good or could not be read. Run \`sqs-jobs dlq list\`, fix the cause, then \`sqs-jobs dlq replay\`.`,
    metric: q.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const sla = laneSlas(s);
  const oldest = (id: string, queue: sqs.IQueue, lane: string, seconds: number, what: string) =>
    new cloudwatch.Alarm(scope, id, {
      alarmName: `${queue === q.queue ? name : `${name}-${lane}`}-oldest-message`,
      alarmDescription: `The oldest message in ${what} is older than ${seconds} s, its SLA: jobs wait too long. Check WaitTime vs ProcessTime per job, task count against maxTasks, and failing handlers.`,
      metric: queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
      threshold: seconds,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  const oldestMessage = oldest('OldestMessageAlarm', q.queue, 'normal', sla.normal, name);
  const lanes = q.lanes && {
    high: oldest('HighOldestMessageAlarm', q.lanes.high, 'high', sla.high!, `the high lane ${name}-high (page on it)`),
    low: oldest('LowOldestMessageAlarm', q.lanes.low, 'low', sla.low!, `the low lane ${name}-low`),
  };
  const waiting = acrossQueues(
    own,
    (queue) => queue.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' }),
    'sum',
    'waiting',
  );
  const backlogMessages = backlogThreshold(s);
  const backlog = new cloudwatch.Alarm(scope, 'BacklogAlarm', {
    alarmName: `${name}-backlog`,
    alarmDescription: `More than ${backlogMessages} messages have waited in ${name}${own.length > 1 ? ' and its lanes' : ''} for 5 minutes: ${s.runtime === 'lambda' ? 'more than the function at its maximum concurrency clears within the SLA. Is the mapping at maxConcurrency, are invocations failing or throttled, did a producer send a burst? Raise lambda.maxConcurrency, or find the producer.' : 'more than the workers at maxTasks clear within the SLA. Is the service at maxTasks, are tasks failing to start, did a producer send a burst? Raise maxTasks or concurrency, or find the producer.'}`,
    metric: waiting,
    threshold: backlogMessages,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 5,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const kept = retentionThresholds(s);
  const retention = new cloudwatch.Alarm(scope, 'RetentionAlarm', {
    alarmName: `${name}-retention`,
    alarmDescription: `A message in ${name}${own.length > 1 ? ' or its lanes' : ''} is older than ${kept.queue} s: SQS deletes it unread at ${s.messageRetentionSeconds} s. Get the workers draining it (see the oldest-message alarm), or move it aside with \`sqs-jobs dlq\` tools before it goes.`,
    metric: acrossQueues(
      own,
      (queue) => queue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
      'max',
      'oldest message',
    ),
    threshold: kept.queue,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const deadLetterRetention = new cloudwatch.Alarm(scope, 'DeadLetterRetentionAlarm', {
    alarmName: `${name}-dlq-retention`,
    alarmDescription: `A message has been in ${name}-dlq for more than ${kept.deadLetters} s: one moved there by SQS's redrive may be deleted unread within ${kept.warning} s (its expiry counts from its first enqueue). Run \`sqs-jobs dlq list\`, then replay or save what must not be lost.`,
    metric: q.deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: MINUTE, statistic: 'Maximum' }),
    threshold: kept.deadLetters,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  const all = [deadLetters, oldestMessage, ...(lanes ? [lanes.high, lanes.low] : []), backlog, retention, deadLetterRetention];
  let topic: sns.Topic | undefined;
  if (s.alarmEmail !== undefined) {
    topic = new sns.Topic(scope, 'AlarmTopic');
    topic.addSubscription(new subscriptions.EmailSubscription(s.alarmEmail));
    for (const alarm of [...all, ...more]) alarm.addAlarmAction(new cwActions.SnsAction(topic));
  }
  return { deadLetters, oldestMessage, lanes, backlog, retention, deadLetterRetention, topic };
}
