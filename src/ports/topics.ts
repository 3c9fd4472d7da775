import type { BatchFailure, MessageAttributes } from '../core/message.js';

/** A message as a topic takes it: the body and its message attributes. */
export interface TopicMessage {
  readonly body: string;
  readonly attributes: MessageAttributes;
  /** FIFO topics: the message group (ordered within it) and the deduplication id. */
  readonly groupId?: string | undefined;
  readonly deduplicationId?: string | undefined;
}

/**
 * The topics port: what sqs-jobs does with SNS. Publishing (the producer's `publish`) and, for
 * `provisionEvents`, making topics and subscribing queues to them. The SNS adapter is `SnsTopics`
 * (sqs-jobs/adapters).
 */
export interface TopicPort {
  /** Publish one message to a topic; answers SNS's message id. */
  publish(topicArn: string, message: TopicMessage): Promise<{ messageId: string }>;
  /**
   * Publish up to 10 messages to a topic in one call (SNS PublishBatch): answers, by the ids
   * given, those it took and those it refused (`transient` when SNS was at fault).
   */
  publishBatch(
    topicArn: string,
    entries: readonly { readonly id: string; readonly message: TopicMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }>;
  /** The ARN of the topic with this name in the port's account and region, if there is one (for a publisher that knows no account). */
  findTopic?(name: string): Promise<string | undefined>;
}

/** One subscription of a topic, as SNS reports it. */
export interface TopicSubscription {
  readonly subscriptionArn: string;
  readonly protocol: string;
  /** The queue ARN, for an sqs subscription. */
  readonly endpoint: string;
}

/** A subscription's settings sqs-jobs manages. */
export interface SubscriptionSettings {
  readonly rawMessageDelivery: boolean;
  /** The filter policy as JSON; undefined: none. */
  readonly filterPolicy: string | undefined;
}

/**
 * What `provisionEvents` asks of SNS: topics, and queue subscriptions with the settings sqs-jobs
 * manages. SnsTopics (sqs-jobs/adapters) implements it. A call SNS refuses rejects.
 */
export interface TopicAdmin {
  /** Create the topic if it does not exist (idempotent; a name ending in .fifo makes a FIFO topic); answers its ARN and whether it was made now. */
  createTopic(name: string): Promise<{ topicArn: string; created: boolean }>;
  /** The topic's subscriptions, every page; those pending confirmation (no ARN yet) are left out. */
  subscriptions(topicArn: string): Promise<TopicSubscription[]>;
  /**
   * Subscribe the queue `queueArn` to the topic with `settings` (a filter policy applies to message
   * attributes); answers the subscription's ARN. The queue's policy must let the topic send to it.
   */
  subscribeQueue(topicArn: string, queueArn: string, settings: SubscriptionSettings): Promise<string>;
  /** The subscription's managed settings as they are now; no filter policy reads as undefined. */
  subscriptionSettings(subscriptionArn: string): Promise<SubscriptionSettings>;
  /** Set the settings that differ; a filter policy of undefined removes it. */
  applySubscriptionSettings(subscriptionArn: string, settings: SubscriptionSettings): Promise<void>;
}
