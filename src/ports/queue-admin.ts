/**
 * The queue admin port: what an operator's tools ask of SQS beyond moving messages (createQueues,
 * the DLQ commands, stats). In sqs-jobs' words; src/adapters/sqs-admin.ts implements it over the
 * AWS SDK. Messages themselves (receive, hold, send, delete) go through the queue port.
 */

/** The settings createQueues manages on a queue; the redrive policy's two halves apart. */
export interface QueueSettings {
  readonly visibilityTimeout?: number | undefined;
  readonly messageRetentionSeconds?: number | undefined;
  readonly maximumMessageSize?: number | undefined;
  readonly maxReceiveCount?: number | undefined;
  readonly deadLetterTargetArn?: string | undefined;
}

/** A queue's approximate message counts, as SQS reports them. */
export interface QueueCounts {
  readonly visible: number;
  /** Received and not yet deleted or visible again. */
  readonly inFlight: number;
  /** Sent with a delay that has not passed. */
  readonly delayed: number;
}

/** The queue admin port (see above); SqsQueueAdmin (sqs-jobs/adapters) implements it. Errors reject (findQueue answers undefined for a missing queue). */
export interface QueueAdmin {
  /** The URL of the queue named `name` (in `account`, default the caller's), or undefined when there is none. */
  findQueue(name: string, account?: string): Promise<string | undefined>;
  /** Create a queue (a FIFO queue when `fifo`); answers its URL. */
  createQueue(name: string, fifo: boolean): Promise<string>;
  /** The queue's managed settings as they are now. */
  settings(queueUrl: string): Promise<QueueSettings>;
  /** Set the settings given in one call; a redrive policy is set whole (give both halves). */
  applySettings(queueUrl: string, settings: QueueSettings): Promise<void>;
  /** The queue's ARN (its QueueArn attribute). */
  arnOf(queueUrl: string): Promise<string>;
  /** The queue's access policy (JSON), or undefined when it has none. */
  policy(queueUrl: string): Promise<string | undefined>;
  /** Set the queue's access policy (JSON), alone in its call. */
  setPolicy(queueUrl: string, policy: string): Promise<void>;
  /** The URL of the queue an ARN names. */
  urlOfArn(arn: string): Promise<string>;
  /** The queue's message counts now: approximate, and they may lag a recent send or receive. */
  counts(queueUrl: string): Promise<QueueCounts>;
  /** Delete every message in the queue (SQS allows one purge per queue per 60 s). */
  purge(queueUrl: string): Promise<void>;
}
