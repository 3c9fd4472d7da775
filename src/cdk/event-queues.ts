import { CfnOutput, Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { subscriberQueueNameFor } from '../core/event.js';
import { filterPolicyOf } from '../ops/events.js';
import { DLQ_RETENTION_SECONDS, dlqNameFor } from '../ops/queues.js';
import { type EventSetting, subscriptionOf, topicKeyOf } from './event-settings.js';

interface SubscriberQueuesProps {
  /** Checked already (settings.ts): the rules are provisionEvents'. */
  readonly events: readonly EventSetting[];
  /** What each subscriber queue gets: the job queue's settings, as `events create --visibility-timeout --max-receive-count` takes them. */
  readonly queue: { readonly visibilityTimeout: number; readonly messageRetentionSeconds: number; readonly maxReceiveCount: number };
}

/** One job that runs on an event, as the stack deploys it: its event's topic, its own queue and DLQ, and the alarm on that DLQ. */
export interface Subscriber {
  readonly job: string;
  readonly event: string;
  readonly topic: sns.ITopic;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Any message in the subscriber's DLQ; the stack sends it where its own dead-letter alarm goes. */
  readonly deadLettersAlarm: cloudwatch.Alarm;
}

/**
 * What `sqs-jobs events create` (provisionEvents) makes, as CloudFormation: each event's topic
 * (unless the event names an existing one by ARN); for each subscriber job, its queue and DLQ
 * named after the job, with the job queue's settings and redrive; a queue policy letting SNS send
 * only from the topic (aws:SourceArn); the subscription with raw delivery and the job's filter
 * policy on message attributes; and an alarm on the DLQ.
 */
export class SubscriberQueues extends Construct {
  readonly subscribers: readonly Subscriber[];
  /** With subscribers: attach to the services that publish the events (sns:Publish on these topics only). */
  readonly publisherPolicy: iam.ManagedPolicy | undefined;

  constructor(scope: Construct, id: string, props: SubscriberQueuesProps) {
    super(scope, id);
    const topics = new Map<string, sns.ITopic>();
    const topicFor = (key: string, existing: boolean, fifo: boolean) => {
      let topic = topics.get(key);
      if (topic === undefined) {
        topic = existing
          ? sns.Topic.fromTopicArn(this, `Topic ${key}`, key)
          : new sns.Topic(this, `Topic ${key}`, { topicName: key, ...(fifo ? { fifo: true, contentBasedDeduplication: false } : {}) });
        if (!existing) new CfnOutput(topic, 'TopicArn', { value: topic.topicArn, description: `SNS topic ${key}` });
        topics.set(key, topic);
      }
      return topic;
    };
    const q = props.queue;
    this.subscribers = props.events.map((e) => {
      const on = subscriptionOf(e);
      const fifo = on.event.fifo;
      const topic = topicFor(topicKeyOf(on.event), on.event.topicArn !== undefined, fifo);
      // A FIFO event's subscriber queue is FIFO (.fifo), and so is its DLQ.
      const name = subscriberQueueNameFor(e.job, fifo);
      const jobScope = new Construct(this, e.job);
      const deadLetterQueue = new sqs.Queue(jobScope, 'DeadLetterQueue', {
        queueName: dlqNameFor(name),
        retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
        ...(fifo ? { fifo: true } : {}),
      });
      const queue = new sqs.Queue(jobScope, 'Queue', {
        queueName: name,
        visibilityTimeout: Duration.seconds(q.visibilityTimeout),
        retentionPeriod: Duration.seconds(q.messageRetentionSeconds),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: q.maxReceiveCount },
        ...(fifo ? { fifo: true } : {}),
      });
      // SqsSubscription adds the queue policy: sqs:SendMessage by sns.amazonaws.com, ArnEquals aws:SourceArn the topic.
      const policy = filterPolicyOf(on);
      const subscription = topic.addSubscription(
        new subscriptions.SqsSubscription(queue, {
          rawMessageDelivery: true,
          ...(policy === undefined ? {} : { filterPolicy: subscriptionFilters(policy) }),
        }),
      );
      if (policy !== undefined) (subscription.node.defaultChild as sns.CfnSubscription).filterPolicyScope = 'MessageAttributes';
      const deadLettersAlarm = new cloudwatch.Alarm(jobScope, 'DeadLettersAlarm', {
        alarmName: `${name}-dead-letters`,
        alarmDescription: `Messages in ${dlqNameFor(name)}: job ${e.job} (on event ${e.event}) failed for good or could not be read. Run \`sqs-jobs dlq list --queue <its queue URL>\`, fix the cause, then \`sqs-jobs dlq replay\`.`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      new CfnOutput(jobScope, 'QueueUrl', { value: queue.queueUrl, description: `job ${e.job}'s queue (event ${e.event})` });
      return { job: e.job, event: e.event, topic, queue, deadLetterQueue, deadLettersAlarm };
    });
    this.publisherPolicy =
      topics.size === 0
        ? undefined
        : new iam.ManagedPolicy(this, 'PublisherPolicy', {
            description: 'sqs-jobs publisher: publish the events to their SNS topics',
            statements: [
              new iam.PolicyStatement({
                sid: 'PublishEvents',
                actions: ['sns:Publish'],
                resources: [...topics.values()].map((t) => t.topicArn),
              }),
              // createPublisher() without an account finds each topic by name (ListTopics takes no resource).
              new iam.PolicyStatement({ sid: 'FindTopics', actions: ['sns:ListTopics'], resources: ['*'] }),
            ],
          });
  }
}

/** A filter policy as filterPolicyOf writes it (JSON), as CDK takes it: each attribute's conditions as given. */
function subscriptionFilters(policy: string): Record<string, sns.SubscriptionFilter> {
  const parsed = JSON.parse(policy) as Record<string, unknown[]>;
  return Object.fromEntries(Object.entries(parsed).map(([attribute, conditions]) => [attribute, new sns.SubscriptionFilter(conditions)]));
}
