import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { SqsJobsError, ValidationError, toError } from './errors.js';
import { parseWith } from './validation.js';

export const DLQ_RETENTION_SECONDS = 14 * 24 * 3600;

const queueSpecSchema = z
  .object({
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9_-]{1,75}(\.fifo)?$/,
        'must be 1-75 letters, digits, - or _ (optionally ending in .fifo), leaving room for the -dlq and -spill suffixes',
      ),
    maxReceiveCount: z.number().int().min(1, 'must be >= 1').max(1000, 'must be <= 1000 (SQS limit)').default(5),
    visibilityTimeout: z.number().int().min(0).max(43_200, 'must be <= 43200 s (12 hours)').default(30),
    messageRetentionSeconds: z
      .number()
      .int()
      .min(60)
      .max(DLQ_RETENTION_SECONDS)
      .default(4 * 24 * 3600),
    maximumMessageSize: z.number().int().min(1024).max(1_048_576).optional(),
    /** Also create `<name>-spill`, the spillover queue of tenant fairness, with the same settings and DLQ. */
    spillover: z.boolean().default(false),
  })
  .strict()
  .refine((s) => !s.spillover || s.name.length <= 74, {
    path: ['name'],
    message: 'must be at most 74 characters with spillover (SQS names end at 80, and -spill is added)',
  });

export type QueueSpec = z.input<typeof queueSpecSchema>;

export interface QueuePair {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
  readonly maxReceiveCount: number;
  /** With `spillover: true`: the queue a producer sends a key's jobs beyond its allowance to. */
  readonly spilloverQueueUrl?: string;
}

/** The spillover queue of tenant fairness (standard queues only). */
export function spilloverNameFor(name: string): string {
  return `${name}-spill`;
}

export function dlqNameFor(name: string): string {
  return name.endsWith('.fifo') ? `${name.slice(0, -'.fifo'.length)}-dlq.fifo` : `${name}-dlq`;
}

/**
 * Create a job queue and its dead-letter queue, wired with a RedrivePolicy. Idempotent: queues are
 * created with only the attributes CreateQueue must have (FifoQueue), then the rest is set, so
 * running it again with other settings updates the queues instead of failing on a mismatch.
 */
export async function createQueues(sqs: SQSClient, spec: QueueSpec): Promise<QueuePair> {
  const s = parseWith(queueSpecSchema, spec, 'queue', (issues) => new ValidationError('OPTIONS_INVALID', 'invalid queue settings', issues));
  const fifo = s.name.endsWith('.fifo');
  const dlqName = dlqNameFor(s.name);
  try {
    const dlqUrl = await ensureQueue(sqs, dlqName, fifo, { MessageRetentionPeriod: String(DLQ_RETENTION_SECONDS) });
    const dlqArn = await queueArn(sqs, dlqUrl);
    if (fifo && s.spillover) throw new Error('a spillover queue would break FIFO group order: tenant fairness needs a standard queue');
    const attributes = {
      VisibilityTimeout: String(s.visibilityTimeout),
      MessageRetentionPeriod: String(s.messageRetentionSeconds),
      ...(s.maximumMessageSize === undefined ? {} : { MaximumMessageSize: String(s.maximumMessageSize) }),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: s.maxReceiveCount }),
    };
    const queueUrl = await ensureQueue(sqs, s.name, fifo, attributes);
    const spilloverQueueUrl = s.spillover ? await ensureQueue(sqs, spilloverNameFor(s.name), false, attributes) : undefined;
    return {
      queueUrl,
      queueArn: await queueArn(sqs, queueUrl),
      dlqUrl,
      dlqArn,
      maxReceiveCount: s.maxReceiveCount,
      ...(spilloverQueueUrl === undefined ? {} : { spilloverQueueUrl }),
    };
  } catch (error) {
    const e = toError(error);
    throw new SqsJobsError('QUEUE_SETUP_FAILED', `could not create queue "${s.name}" and its DLQ "${dlqName}": ${e.name}: ${e.message}`, {
      cause: error,
    });
  }
}

async function ensureQueue(sqs: SQSClient, name: string, fifo: boolean, attributes: Record<string, string>): Promise<string> {
  const created = await sqs.send(new CreateQueueCommand({ QueueName: name, ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}) }));
  const url = created.QueueUrl ?? (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  if (url === undefined) throw new Error(`SQS returned no URL for queue ${name}`);
  await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
  return url;
}

async function queueArn(sqs: SQSClient, queueUrl: string): Promise<string> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const arn = out.Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`SQS returned no QueueArn for ${queueUrl}`);
  return arn;
}

export interface RedrivePolicy {
  readonly deadLetterTargetArn: string;
  readonly maxReceiveCount: number;
}

/** The queue's RedrivePolicy, or undefined when it has none. */
export async function readRedrivePolicy(sqs: SQSClient, queueUrl: string): Promise<RedrivePolicy | undefined> {
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }));
  const raw = out.Attributes?.RedrivePolicy;
  if (raw === undefined || raw === '') return undefined;
  const policy = JSON.parse(raw) as { deadLetterTargetArn?: string; maxReceiveCount?: string | number };
  if (policy.deadLetterTargetArn === undefined) return undefined;
  return { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: Number(policy.maxReceiveCount) };
}

/** Resolve a queue ARN (arn:aws:sqs:region:account:name) to its URL. */
export async function queueUrlFromArn(sqs: SQSClient, arn: string): Promise<string> {
  const parts = arn.split(':');
  const name = parts[5];
  const account = parts[4];
  if (parts.length !== 6 || name === undefined || account === undefined) throw new Error(`not an SQS queue ARN: ${arn}`);
  const out = await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }));
  if (out.QueueUrl === undefined) throw new Error(`SQS returned no URL for ${arn}`);
  return out.QueueUrl;
}
