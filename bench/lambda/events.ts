/**
 * SQS events as Lambda's event source mapping hands them over (the record shape of AWS's sample
 * event, src/lambda/event.ts), each body a real sqs-jobs envelope with its message attributes, so
 * that sqs-jobs' handler walks it as it would on AWS: its queue found from the record's ARN
 * (`arn:aws:sqs:<region>:<account>:<name>`, the queue URL's last two parts). Every envelope has a
 * new job id and every record a new message id, so the lock and the idempotency records are
 * written each time, never found. Events are built before what is measured, never inside it.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Message } from '@aws-sdk/client-sqs';
import { type Envelope, encodeEnvelope, envelopeAttributes, newJobId } from '../../src/core/envelope.js';
import type { LambdaContext, SqsEvent, SqsEventRecord } from '../../src/lambda/event.js';

export const REGION = 'us-east-1';

/** The ARN the mapping gives records of the queue at `queueUrl` (…/<account>/<name>). */
export function arnOf(queueUrl: string): string {
  const [name, account] = queueUrl.split('/').reverse();
  return `arn:aws:sqs:${REGION}:${account}:${name}`;
}

/** A job's body and message attributes, as a producer sends them. */
export function jobMessage(job: 'noop' | 'fails', n: number): { body: string; attributes: ReturnType<typeof envelopeAttributes> } {
  const envelope: Envelope = { v: 1, id: newJobId(), job, args: { n }, enqueuedAt: new Date().toISOString() };
  return { body: encodeEnvelope(envelope), attributes: envelopeAttributes(envelope) };
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

type Attributes = Record<string, { DataType?: string; StringValue?: string }>;

function record(queueUrl: string, m: { id: string; handle: string; body: string; system: Record<string, string>; attributes: Attributes }) {
  return {
    messageId: m.id,
    receiptHandle: m.handle,
    body: m.body,
    attributes: m.system,
    messageAttributes: Object.fromEntries(
      Object.entries(m.attributes).map(([name, a]) => [
        name,
        { stringValue: a.StringValue, stringListValues: [], binaryListValues: [], dataType: a.DataType ?? 'String' },
      ]),
    ),
    md5OfBody: md5(m.body),
    eventSource: 'aws:sqs',
    eventSourceARN: arnOf(queueUrl),
    awsRegion: REGION,
  } satisfies SqsEventRecord;
}

/** `count` records of new `noop` jobs, never sent: the success path makes no SQS call on either side, so their receipt handles are never used. */
export function noopEvent(queueUrl: string, count: number): SqsEvent {
  const now = Date.now();
  const Records = Array.from({ length: count }, (_, n) => {
    const { body, attributes } = jobMessage('noop', n);
    const system = {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(now),
      SenderId: 'AIDAIENQZJOLO23YVJ4VO',
      ApproximateFirstReceiveTimestamp: String(now),
    };
    return record(queueUrl, { id: randomUUID(), handle: `bench-${randomUUID()}`, body, system, attributes });
  });
  return { Records };
}

/** An event of messages received from the queue: their receipt handles are real, so settling them (a visibility change) works. */
export function eventOf(queueUrl: string, messages: readonly Message[]): SqsEvent {
  return {
    Records: messages.map((m) =>
      record(queueUrl, {
        id: m.MessageId!,
        handle: m.ReceiptHandle!,
        body: m.Body ?? '',
        system: (m.Attributes ?? {}) as Record<string, string>,
        attributes: (m.MessageAttributes ?? {}) as Attributes,
      }),
    ),
  };
}

/** The context Lambda passes: a function of `timeoutMs`, invoked now. */
export function lambdaContext(timeoutMs = 30_000): LambdaContext & Record<string, unknown> {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'bench-lambda',
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${REGION}:000000000000:function:bench-lambda`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: '/aws/lambda/bench-lambda',
    logStreamName: 'bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}
