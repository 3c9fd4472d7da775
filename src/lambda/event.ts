/*
 * What Lambda's SQS event source mapping hands a function, and what the function answers, as AWS
 * documents them (https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html): sqs-jobs' own
 * types, so no types package is needed. Attribute values arrive as text, binaries in base64.
 */

/** One record of an SQS event. */
export interface SqsEventRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** System attributes as text: ApproximateReceiveCount, SentTimestamp, MessageGroupId, AWSTraceHeader, ... */
  readonly attributes: Readonly<Record<string, string | undefined>>;
  readonly messageAttributes: Readonly<
    Record<
      string,
      {
        readonly stringValue?: string | undefined;
        readonly binaryValue?: string | undefined;
        readonly stringListValues?: readonly string[] | undefined;
        readonly binaryListValues?: readonly string[] | undefined;
        readonly dataType: string;
      }
    >
  >;
  readonly md5OfBody?: string;
  readonly eventSource?: string;
  /** The queue's ARN: which queue the record came from. */
  readonly eventSourceARN: string;
  readonly awsRegion?: string;
}

/** The event the mapping invokes the function with. */
export interface SqsEvent {
  readonly Records: readonly SqsEventRecord[];
}

/** The answer with ReportBatchItemFailures: the records to keep (they come back); every other record is deleted. */
export interface SqsBatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** What the handler reads of Lambda's context object: the time left. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
  readonly awsRequestId?: string;
}

/** An SQS event handler for Lambda's Node.js runtime. */
export type LambdaHandler = (event: SqsEvent, context: LambdaContext) => Promise<SqsBatchResponse>;
