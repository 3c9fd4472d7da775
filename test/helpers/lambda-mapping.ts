import { createHash } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/*
 * Lambda's SQS event source mapping, emulated for tests: neither LocalStack without Docker nor
 * moto runs a function, so this does what AWS documents the mapping to do, on a real queue:
 * receive a batch (its size, within its batching window) with every system and message attribute,
 * hand it to the function as the documented SQS event, then, with ReportBatchItemFailures, delete
 * exactly the records the response does not name. The whole batch stays (none deleted: each comes
 * back after the visibility timeout) when the function throws, or its response names an item that
 * is not in the batch or names none (an empty or missing itemIdentifier). Without the setting, a
 * response is success and every record is deleted. Times and ids are the queue's own.
 */

/** One record of the SQS event, with the fields AWS's sample event has. */
export interface SqsEventRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly messageAttributes: Readonly<
    Record<
      string,
      {
        readonly stringValue?: string;
        readonly binaryValue?: string;
        readonly stringListValues: readonly string[];
        readonly binaryListValues: readonly string[];
        readonly dataType: string;
      }
    >
  >;
  readonly md5OfBody: string;
  readonly md5OfMessageAttributes?: string;
  readonly eventSource: 'aws:sqs';
  readonly eventSourceARN: string;
  readonly awsRegion: string;
}

export interface SqsEvent {
  readonly Records: readonly SqsEventRecord[];
}

/** What a function with ReportBatchItemFailures answers. */
export interface SqsBatchResponse {
  readonly batchItemFailures: readonly { readonly itemIdentifier: string | null | undefined }[];
}

/** The Lambda context a handler reads: its deadline, and the names the runtime gives. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
  readonly functionName: string;
  readonly awsRequestId: string;
  readonly invokedFunctionArn: string;
}

export type SqsHandler = (event: SqsEvent, context: LambdaContext) => Promise<SqsBatchResponse | undefined>;

/** What one delivery of a batch came to. */
export interface MappingRound {
  readonly event: SqsEvent;
  /** What the function answered, or what it threw. */
  readonly outcome: { readonly answered: SqsBatchResponse | undefined } | { readonly threw: unknown };
  /** Message ids the mapping deleted. */
  readonly deleted: readonly string[];
  /** Why none was deleted, when the whole batch failed. */
  readonly wholeBatchFailed: string | undefined;
}

export interface MappingSettings {
  /** Records per batch: 1-10 per receive; more (up to 10,000) gathered over the window. Default 10. */
  readonly batchSize?: number;
  /** How long a batch is gathered (MaximumBatchingWindowInSeconds), 0-300. Default 0. */
  readonly windowSeconds?: number;
  /** FunctionResponseTypes ReportBatchItemFailures. Default true. */
  readonly reportBatchItemFailures?: boolean;
  /** The function's timeout, for the context's deadline. Default 30 s. */
  readonly functionTimeoutMs?: number;
}

/** Lambda's SQS event source mapping on `queueUrl`, emulated (see above). */
export class EmulatedMapping {
  readonly #sqs: SQSClient;
  readonly #queueUrl: string;
  readonly #s: Required<MappingSettings>;
  #arn: string | undefined;

  constructor(sqs: SQSClient, queueUrl: string, settings: MappingSettings = {}) {
    this.#sqs = sqs;
    this.#queueUrl = queueUrl;
    this.#s = {
      batchSize: settings.batchSize ?? 10,
      windowSeconds: settings.windowSeconds ?? 0,
      reportBatchItemFailures: settings.reportBatchItemFailures ?? true,
      functionTimeoutMs: settings.functionTimeoutMs ?? 30_000,
    };
  }

  /** Receive a batch as the mapping does; undefined when the queue had none within the wait. */
  async poll(waitSeconds = 1): Promise<SqsEvent | undefined> {
    const arn = await this.#queueArn();
    const messages: Message[] = [];
    const until = Date.now() + Math.max(this.#s.windowSeconds, 0) * 1000;
    do {
      const want = Math.min(10, this.#s.batchSize - messages.length);
      const got = await this.#sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: this.#queueUrl,
          MaxNumberOfMessages: want,
          WaitTimeSeconds: messages.length === 0 ? waitSeconds : Math.min(20, Math.ceil((until - Date.now()) / 1000)),
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      messages.push(...(got.Messages ?? []));
      if ((got.Messages ?? []).length === 0 && messages.length === 0) return undefined;
    } while (messages.length < this.#s.batchSize && Date.now() < until);
    const region = arn.split(':')[3] ?? 'us-east-1';
    return { Records: messages.map((m) => recordOf(m, arn, region)) };
  }

  /** One round: poll, invoke `handler`, delete what the mapping deletes. Undefined when nothing came. */
  async deliver(handler: SqsHandler, waitSeconds = 1): Promise<MappingRound | undefined> {
    const event = await this.poll(waitSeconds);
    if (event === undefined) return undefined;
    const deadline = Date.now() + this.#s.functionTimeoutMs;
    const context: LambdaContext = {
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
      functionName: 'emulated',
      awsRequestId: createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 32),
      invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:emulated',
    };
    let outcome: MappingRound['outcome'];
    try {
      outcome = { answered: (await handler(event, context)) ?? undefined };
    } catch (error) {
      outcome = { threw: error };
    }
    const verdict = this.#toDelete(event, outcome);
    if (typeof verdict === 'string') return { event, outcome, deleted: [], wholeBatchFailed: verdict };
    await this.#delete(verdict);
    return { event, outcome, deleted: verdict.map((r) => r.messageId), wholeBatchFailed: undefined };
  }

  /** The records the mapping deletes after `outcome`, or why the whole batch failed. */
  #toDelete(event: SqsEvent, outcome: MappingRound['outcome']): readonly SqsEventRecord[] | string {
    if ('threw' in outcome) return 'the function threw';
    if (!this.#s.reportBatchItemFailures) return event.Records;
    const failures = outcome.answered?.batchItemFailures ?? [];
    const ids = new Set(event.Records.map((r) => r.messageId));
    for (const f of failures) {
      if (f.itemIdentifier === undefined || f.itemIdentifier === null || f.itemIdentifier === '') return 'an item failure names no item';
      if (!ids.has(f.itemIdentifier)) return `an item failure names ${f.itemIdentifier}, not in the batch`;
    }
    const failed = new Set(failures.map((f) => f.itemIdentifier));
    return event.Records.filter((r) => !failed.has(r.messageId));
  }

  async #delete(records: readonly SqsEventRecord[]): Promise<void> {
    for (let i = 0; i < records.length; i += 10) {
      const entries = records.slice(i, i + 10).map((r, n) => ({ Id: `d${n}`, ReceiptHandle: r.receiptHandle }));
      const out = await this.#sqs.send(new DeleteMessageBatchCommand({ QueueUrl: this.#queueUrl, Entries: entries }));
      if ((out.Failed ?? []).length > 0) throw new Error(`the mapping's delete failed: ${JSON.stringify(out.Failed)}`);
    }
  }

  async #queueArn(): Promise<string> {
    if (this.#arn !== undefined) return this.#arn;
    const out = await this.#sqs.send(new GetQueueAttributesCommand({ QueueUrl: this.#queueUrl, AttributeNames: ['QueueArn'] }));
    this.#arn = out.Attributes?.QueueArn ?? '';
    return this.#arn;
  }
}

/** A received message as the mapping hands it to the function: attribute values as text, binaries in base64. */
function recordOf(m: Message, arn: string, region: string): SqsEventRecord {
  const attributes = Object.fromEntries(Object.entries(m.Attributes ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string>;
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes,
    messageAttributes: Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([name, v]) => [name, attributeOf(v)])),
    md5OfBody:
      m.MD5OfBody ??
      createHash('md5')
        .update(m.Body ?? '')
        .digest('hex'),
    ...(m.MD5OfMessageAttributes === undefined ? {} : { md5OfMessageAttributes: m.MD5OfMessageAttributes }),
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}

function attributeOf(v: MessageAttributeValue): SqsEventRecord['messageAttributes'][string] {
  return {
    ...(v.StringValue === undefined ? {} : { stringValue: v.StringValue }),
    ...(v.BinaryValue === undefined ? {} : { binaryValue: Buffer.from(v.BinaryValue).toString('base64') }),
    stringListValues: v.StringListValues ?? [],
    binaryListValues: (v.BinaryListValues ?? []).map((b) => Buffer.from(b).toString('base64')),
    dataType: v.DataType ?? 'String',
  };
}
