import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { QueueAdmin, QueueCounts, QueueSettings } from '../ports/queue-admin.js';

/** QueueAdmin over the AWS SDK. */
export class SqsQueueAdmin implements QueueAdmin {
  constructor(private readonly client: SQSClient) {}

  async findQueue(name: string, account?: string): Promise<string | undefined> {
    try {
      const out = await this.client.send(
        new GetQueueUrlCommand({ QueueName: name, ...(account === undefined ? {} : { QueueOwnerAWSAccountId: account }) }),
      );
      return out.QueueUrl;
    } catch (error) {
      const code = (error as Error).name;
      if (code === 'QueueDoesNotExist' || code === 'AWS.SimpleQueueService.NonExistentQueue') return undefined;
      throw error;
    }
  }

  async createQueue(name: string, fifo: boolean): Promise<string> {
    const created = await this.client.send(
      new CreateQueueCommand({ QueueName: name, ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}) }),
    );
    const url = created.QueueUrl ?? (await this.findQueue(name));
    if (url === undefined) throw new Error(`SQS returned no URL for queue ${name}`);
    return url;
  }

  async settings(queueUrl: string): Promise<QueueSettings> {
    const a = await this.#attributes(queueUrl, ['All']);
    const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
    const policy = parseRedrivePolicy(a.RedrivePolicy);
    return {
      visibilityTimeout: num(a.VisibilityTimeout),
      messageRetentionSeconds: num(a.MessageRetentionPeriod),
      maximumMessageSize: num(a.MaximumMessageSize),
      maxReceiveCount: policy?.maxReceiveCount,
      deadLetterTargetArn: policy?.deadLetterTargetArn,
    };
  }

  async applySettings(queueUrl: string, s: QueueSettings): Promise<void> {
    const attributes: Record<string, string> = {};
    if (s.visibilityTimeout !== undefined) attributes.VisibilityTimeout = String(s.visibilityTimeout);
    if (s.messageRetentionSeconds !== undefined) attributes.MessageRetentionPeriod = String(s.messageRetentionSeconds);
    if (s.maximumMessageSize !== undefined) attributes.MaximumMessageSize = String(s.maximumMessageSize);
    if (s.deadLetterTargetArn !== undefined) {
      attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: s.deadLetterTargetArn, maxReceiveCount: s.maxReceiveCount });
    }
    if (Object.keys(attributes).length > 0)
      await this.client.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: attributes }));
  }

  async policy(queueUrl: string): Promise<string | undefined> {
    const p = (await this.#attributes(queueUrl, ['Policy'])).Policy;
    return p === undefined || p === '' ? undefined : p;
  }

  async setPolicy(queueUrl: string, policy: string): Promise<void> {
    await this.client.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { Policy: policy } }));
  }

  /** Reads the QueueArn attribute; see QueueAdmin.arnOf. */
  async arnOf(queueUrl: string): Promise<string> {
    const arn = (await this.#attributes(queueUrl, ['QueueArn'])).QueueArn;
    if (arn === undefined) throw new Error(`SQS returned no QueueArn for ${queueUrl}`);
    return arn;
  }

  /** Resolve a queue ARN (arn:aws:sqs:region:account:name) to its URL. */
  async urlOfArn(arn: string): Promise<string> {
    const parts = arn.split(':');
    const name = parts[5];
    const account = parts[4];
    if (parts.length !== 6 || name === undefined || account === undefined) throw new Error(`not an SQS queue ARN: ${arn}`);
    const out = await this.client.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
    if (out.QueueUrl === undefined) throw new Error(`SQS returned no URL for ${arn}`);
    return out.QueueUrl;
  }

  /** Reads the ApproximateNumberOfMessages, …NotVisible and …Delayed attributes; see QueueAdmin.counts. */
  async counts(queueUrl: string): Promise<QueueCounts> {
    const a = await this.#attributes(queueUrl, [
      'ApproximateNumberOfMessages',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateNumberOfMessagesDelayed',
    ]);
    return {
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  }

  async purge(queueUrl: string): Promise<void> {
    await this.client.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  }

  async #attributes(queueUrl: string, names: NonNullable<ConstructorParameters<typeof GetQueueAttributesCommand>[0]['AttributeNames']>) {
    return (await this.client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: names }))).Attributes ?? {};
  }
}

/** A RedrivePolicy attribute's value, or undefined when it names no DLQ. */
export function parseRedrivePolicy(raw: string | undefined): { deadLetterTargetArn: string; maxReceiveCount: number } | undefined {
  if (raw === undefined || raw === '') return undefined;
  const policy = JSON.parse(raw) as { deadLetterTargetArn?: string; maxReceiveCount?: string | number };
  if (policy.deadLetterTargetArn === undefined) return undefined;
  return { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: Number(policy.maxReceiveCount) };
}
