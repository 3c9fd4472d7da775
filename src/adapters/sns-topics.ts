import {
  CreateTopicCommand,
  GetSubscriptionAttributesCommand,
  ListSubscriptionsByTopicCommand,
  ListTopicsCommand,
  PublishBatchCommand,
  PublishCommand,
  SetSubscriptionAttributesCommand,
  SNSClient,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import type { AwsSettings, Env } from '../config/env.js';
import { type ClientOptions, clientConfig, withoutLogging } from './aws-clients.js';
import type { BatchFailure, MessageAttributes } from '../core/message.js';
import type { SubscriptionSettings, TopicAdmin, TopicMessage, TopicPort, TopicSubscription } from '../ports/topics.js';
import { sameJson } from '../core/same-json.js';
import { topicNameOf } from '../core/event.js';

/** An SNS client with sqs-jobs' settings (loopback credentials, its own sockets), as createSqsClient makes SQS's. */
export function createSnsClient(settings: AwsSettings, options: ClientOptions = {}, env: Env = process.env): SNSClient {
  return withoutLogging(new SNSClient(clientConfig(settings, options, env)));
}

/** The topics port on the AWS SDK's SNS client. */
export class SnsTopics implements TopicPort, TopicAdmin {
  readonly #sns: SNSClient;

  constructor(client: SNSClient) {
    this.#sns = client;
  }

  async publish(topicArn: string, message: TopicMessage): Promise<{ messageId: string }> {
    const out = await this.#sns.send(
      new PublishCommand({
        TopicArn: topicArn,
        Message: message.body,
        MessageAttributes: snsAttributes(message.attributes),
        MessageGroupId: message.groupId,
        MessageDeduplicationId: message.deduplicationId,
      }),
    );
    return { messageId: out.MessageId ?? '' };
  }

  async publishBatch(
    topicArn: string,
    entries: readonly { readonly id: string; readonly message: TopicMessage }[],
  ): Promise<{ sent: { id: string; messageId: string }[]; failed: BatchFailure[] }> {
    const out = await this.#sns.send(
      new PublishBatchCommand({
        TopicArn: topicArn,
        PublishBatchRequestEntries: entries.map((e) => ({
          Id: e.id,
          Message: e.message.body,
          MessageAttributes: snsAttributes(e.message.attributes),
          MessageGroupId: e.message.groupId,
          MessageDeduplicationId: e.message.deduplicationId,
        })),
      }),
    );
    return {
      sent: (out.Successful ?? []).map((s) => ({ id: s.Id ?? '', messageId: s.MessageId ?? '' })),
      // SNS's own fault (throttled, internal) may pass on a retry; the sender's will not.
      failed: (out.Failed ?? []).map((f) => ({
        id: f.Id ?? '',
        code: f.Code ?? 'Unknown',
        message: f.Message ?? '',
        kind: f.SenderFault === true ? ('fatal' as const) : ('transient' as const),
      })),
    };
  }

  async findTopic(name: string): Promise<string | undefined> {
    let token: string | undefined;
    do {
      const page = await this.#sns.send(new ListTopicsCommand({ NextToken: token }));
      const found = (page.Topics ?? []).find((t) => t.TopicArn !== undefined && topicNameOf(t.TopicArn) === name);
      if (found?.TopicArn !== undefined) return found.TopicArn;
      token = page.NextToken;
    } while (token !== undefined);
    return undefined;
  }

  async createTopic(name: string): Promise<{ topicArn: string; created: boolean }> {
    const existed = await this.#exists(name);
    const fifo = name.endsWith('.fifo');
    // A FIFO topic deduplicates by the id each publish gives (the event id), never by content.
    const out = await this.#sns.send(
      new CreateTopicCommand({ Name: name, ...(fifo ? { Attributes: { FifoTopic: 'true', ContentBasedDeduplication: 'false' } } : {}) }),
    );
    if (out.TopicArn === undefined) throw new Error(`SNS made the topic ${name} but gave no ARN`);
    return { topicArn: out.TopicArn, created: !existed };
  }

  /** Lists the subscriptions with ListSubscriptionsByTopic; see TopicAdmin.subscriptions. */
  async subscriptions(topicArn: string): Promise<TopicSubscription[]> {
    const all: TopicSubscription[] = [];
    let token: string | undefined;
    do {
      const page = await this.#sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: token }));
      for (const s of page.Subscriptions ?? []) {
        if (s.SubscriptionArn === undefined || s.SubscriptionArn === 'PendingConfirmation') continue;
        all.push({ subscriptionArn: s.SubscriptionArn, protocol: s.Protocol ?? '', endpoint: s.Endpoint ?? '' });
      }
      token = page.NextToken;
    } while (token !== undefined);
    return all;
  }

  /** Subscribes with the sqs protocol; see TopicAdmin.subscribeQueue. */
  async subscribeQueue(topicArn: string, queueArn: string, settings: SubscriptionSettings): Promise<string> {
    const out = await this.#sns.send(
      new SubscribeCommand({
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: queueArn,
        ReturnSubscriptionArn: true,
        Attributes: {
          RawMessageDelivery: String(settings.rawMessageDelivery),
          ...(settings.filterPolicy === undefined ? {} : { FilterPolicy: settings.filterPolicy, FilterPolicyScope: 'MessageAttributes' }),
        },
      }),
    );
    if (out.SubscriptionArn === undefined) throw new Error(`SNS subscribed ${queueArn} to ${topicArn} but gave no ARN`);
    return out.SubscriptionArn;
  }

  /** Reads the subscription's attributes; see TopicAdmin.subscriptionSettings. */
  async subscriptionSettings(subscriptionArn: string): Promise<SubscriptionSettings> {
    const out = await this.#sns.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: subscriptionArn }));
    const a = out.Attributes ?? {};
    // No filter reads as absent, '' or '{}' depending on the server.
    const filter = a.FilterPolicy === undefined || a.FilterPolicy === '' || a.FilterPolicy === '{}' ? undefined : a.FilterPolicy;
    return { rawMessageDelivery: a.RawMessageDelivery === 'true', filterPolicy: filter };
  }

  async applySubscriptionSettings(subscriptionArn: string, settings: SubscriptionSettings): Promise<void> {
    const now = await this.subscriptionSettings(subscriptionArn);
    const set = (AttributeName: string, AttributeValue: string) =>
      this.#sns.send(new SetSubscriptionAttributesCommand({ SubscriptionArn: subscriptionArn, AttributeName, AttributeValue }));
    if (now.rawMessageDelivery !== settings.rawMessageDelivery) await set('RawMessageDelivery', String(settings.rawMessageDelivery));
    if (!sameJson(now.filterPolicy, settings.filterPolicy)) {
      // '{}' removes a filter policy (SNS's documented way); a policy matches message attributes.
      if (settings.filterPolicy !== undefined) await set('FilterPolicyScope', 'MessageAttributes');
      await set('FilterPolicy', settings.filterPolicy ?? '{}');
    }
  }

  async #exists(name: string): Promise<boolean> {
    return (await this.findTopic(name)) !== undefined;
  }
}

function snsAttributes(attributes: MessageAttributes): Record<string, { DataType: string; StringValue: string | undefined }> {
  return Object.fromEntries(Object.entries(attributes).map(([k, a]) => [k, { DataType: a.DataType, StringValue: a.StringValue }]));
}
