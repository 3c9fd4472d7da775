import { z } from 'zod';
import { SqsJobsError, ValidationError, toError } from '../core/errors.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import { ensureQueue, type QueueChange } from './queue-settings.js';
import { parseWith } from '../core/validation.js';
import { laneNameFor } from '../core/priority.js';
import { SQS_MAX_VISIBILITY_SECONDS } from '../core/sqs-limits.js';

export type { QueueChange } from './queue-settings.js';

export const DLQ_RETENTION_SECONDS = 14 * 24 * 3600;

const queueSpecSchema = z
  .object({
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9_-]{1,75}(\.fifo)?$/,
        'must be 1-75 letters, digits, - or _ (optionally ending in .fifo), leaving room for the -dlq and -spill suffixes',
      ),
    // Left out: an existing queue keeps its value; a new one gets QUEUE_DEFAULTS.
    maxReceiveCount: z.number().int().min(1, 'must be >= 1').max(1000, 'must be <= 1000 (SQS limit)').optional(),
    visibilityTimeout: z.number().int().min(0).max(SQS_MAX_VISIBILITY_SECONDS, 'must be <= 43200 s (12 hours)').optional(),
    messageRetentionSeconds: z.number().int().min(60).max(DLQ_RETENTION_SECONDS).optional(),
    maximumMessageSize: z.number().int().min(1024).max(1_048_576).optional(),
    /** Also create `<name>-spill`, the spillover queue of tenant fairness, with the same settings and DLQ. */
    spillover: z.boolean().default(false),
    /** Also create the priority tiers' lanes `<name>-high` and `<name>-low`, with the same settings and DLQ. */
    tiers: z.boolean().default(false),
  })
  .strict()
  .refine((s) => !s.spillover || s.name.length <= 74, {
    path: ['name'],
    message: 'must be at most 74 characters with spillover (SQS names end at 80, and -spill is added)',
  })
  .refine((s) => !s.tiers || laneNameFor(s.name, 'high').length <= 80, {
    path: ['name'],
    message: 'must leave room for -high with tiers (SQS names end at 80, .fifo included)',
  });

/**
 * What createQueues makes: the queue (`name`, ending `.fifo` for FIFO), its settings (times in seconds,
 * `maximumMessageSize` in bytes) and any spillover queue or tier lanes. A setting left out keeps an
 * existing queue's value; a new queue gets 30 s visibility, 4 days' retention, 5 receives before the DLQ.
 */
export type QueueSpec = z.input<typeof queueSpecSchema>;

/** What createQueues answers: the queue's and DLQ's URLs and ARNs, its `maxReceiveCount`, any spillover queue or lanes, what changed. */
export interface QueuePair {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly dlqUrl: string;
  readonly dlqArn: string;
  readonly maxReceiveCount: number;
  /** With `spillover: true`: the queue a producer sends a key's jobs beyond its allowance to. */
  readonly spilloverQueueUrl?: string;
  /** With `tiers: true`: the lanes of the high and low tiers (the queue itself is normal's). */
  readonly lanes?: { readonly high: string; readonly low: string };
  /** What this call created or changed, in order; empty when everything was already as asked. */
  readonly changes: readonly QueueChange[];
}

/** What a new queue gets for a setting left out (an existing queue keeps its own). */
const QUEUE_DEFAULTS = { visibilityTimeout: 30, messageRetentionSeconds: 4 * 24 * 3600, maxReceiveCount: 5 } as const;

/** The spillover queue of tenant fairness (standard queues only). */
export function spilloverNameFor(name: string): string {
  return `${name}-spill`;
}

export function dlqNameFor(name: string): string {
  return name.endsWith('.fifo') ? `${name.slice(0, -'.fifo'.length)}-dlq.fifo` : `${name}-dlq`;
}

/**
 * Create a job queue and its dead-letter queue, wired with a RedrivePolicy. Idempotent: a queue
 * that is missing is made (with QUEUE_DEFAULTS for what `spec` leaves out); on one that exists
 * only the settings `spec` gives are applied, so running it again never resets the others.
 * `changes` says what was created or changed.
 */
export async function provisionQueues(admin: QueueAdmin, spec: QueueSpec): Promise<QueuePair> {
  const s = parseWith(queueSpecSchema, spec, 'queue', (issues) => new ValidationError('OPTIONS_INVALID', 'invalid queue settings', issues));
  const fifo = s.name.endsWith('.fifo');
  const dlqName = dlqNameFor(s.name);
  try {
    if (fifo && s.spillover) throw new Error('a spillover queue would break FIFO group order: tenant fairness needs a standard queue');
    const changes: QueueChange[] = [];
    const dlq = await ensureQueue(admin, dlqName, fifo, { messageRetentionSeconds: DLQ_RETENTION_SECONDS }, {}, changes);
    const dlqArn = await admin.arnOf(dlq.url);
    const wanted = {
      visibilityTimeout: s.visibilityTimeout,
      messageRetentionSeconds: s.messageRetentionSeconds,
      maximumMessageSize: s.maximumMessageSize,
      maxReceiveCount: s.maxReceiveCount,
      deadLetterTargetArn: dlqArn,
    };
    const main = await ensureQueue(admin, s.name, fifo, wanted, QUEUE_DEFAULTS, changes);
    // The spillover queue mirrors the queue: the settings it now has, and its DLQ.
    const spill = s.spillover ? await ensureQueue(admin, spilloverNameFor(s.name), false, main.settings, {}, changes) : undefined;
    // So do the tiers' lanes: the same settings and DLQ, so a job's tier changes only when it starts.
    const lane = async (priority: 'high' | 'low') =>
      (await ensureQueue(admin, laneNameFor(s.name, priority), fifo, main.settings, {}, changes)).url;
    const lanes = s.tiers ? { high: await lane('high'), low: await lane('low') } : undefined;
    return {
      queueUrl: main.url,
      queueArn: await admin.arnOf(main.url),
      dlqUrl: dlq.url,
      dlqArn,
      maxReceiveCount: main.settings.maxReceiveCount ?? QUEUE_DEFAULTS.maxReceiveCount,
      ...(spill === undefined ? {} : { spilloverQueueUrl: spill.url }),
      ...(lanes === undefined ? {} : { lanes }),
      changes,
    };
  } catch (error) {
    const e = toError(error);
    throw new SqsJobsError('QUEUE_SETUP_FAILED', `could not create queue "${s.name}" and its DLQ "${dlqName}": ${e.name}: ${e.message}`, {
      cause: error,
    });
  }
}
