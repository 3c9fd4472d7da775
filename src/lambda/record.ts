import type { MessageAttribute, ReceivedMessage } from '../core/message.js';
import type { SqsEventRecord } from './event.js';

/**
 * The queue URL of an event's ARN (arn:aws:sqs:<region>:<account>:<name>): the configured queue of
 * that account and name (its URL ends /<account>/<name>), else the URL AWS gives such a queue.
 */
export function queueUrlOfArn(arn: string, configured: readonly string[]): string {
  const parts = arn.split(':');
  const [region, account, name] = [parts[3], parts[4], parts[5]];
  if (parts[0] !== 'arn' || parts[2] !== 'sqs' || !region || !account || !name) throw new Error(`not an SQS queue ARN: "${arn}"`);
  const own = configured.find((url) => url.endsWith(`/${account}/${name}`));
  return own ?? `https://sqs.${region}.amazonaws.com/${account}/${name}`;
}

/** A record as the worker's walk sees a received message: the same fields a receive gives. */
export function messageOf(record: SqsEventRecord, queueUrl: string): ReceivedMessage {
  const a = record.attributes;
  const receiveCount = Number(a.ApproximateReceiveCount ?? 1);
  const sentAt = Number(a.SentTimestamp ?? Date.now());
  return {
    queueUrl,
    messageId: record.messageId,
    receiptHandle: record.receiptHandle,
    body: record.body,
    receiveCount: Number.isSafeInteger(receiveCount) && receiveCount > 0 ? receiveCount : 1,
    sentAt: Number.isFinite(sentAt) ? sentAt : Date.now(),
    groupId: a.MessageGroupId,
    attributes: attributesOf(record.messageAttributes),
    awsTraceHeader: a.AWSTraceHeader,
  };
}

/** Message attributes as SQS keeps them: a string, a number as text, or a binary (base64 in the event). */
function attributesOf(given: SqsEventRecord['messageAttributes']): Record<string, MessageAttribute> {
  const out: Record<string, MessageAttribute> = {};
  for (const [name, v] of Object.entries(given ?? {})) {
    if (v.stringValue !== undefined) out[name] = { DataType: v.dataType, StringValue: v.stringValue };
    else if (v.binaryValue !== undefined) out[name] = { DataType: v.dataType, BinaryValue: Buffer.from(v.binaryValue, 'base64') };
  }
  return out;
}
