import type { z } from 'zod';
import { ValidationError } from '../core/errors.js';
import { KEY_RULES } from './key-options.js';
import type { enqueueOptionsSchema } from './options.js';

/** Enqueue options that are well-formed but do not fit this producer's queue or setup. */
export function checkOptionsFit(
  jobName: string,
  opts: z.output<typeof enqueueOptionsSchema>,
  producer: {
    readonly fifo: boolean;
    readonly hasStore: boolean;
    readonly tiers: boolean;
    readonly keepsKeys: boolean;
    readonly keepsTimed: boolean;
  },
): void {
  const fail = (field: string, rule: string) =>
    new ValidationError('OPTIONS_INVALID', `invalid enqueue options for job "${jobName}"`, [{ field: `options.${field}`, rule }]);
  if (producer.fifo && ((opts.delaySeconds !== undefined && opts.delaySeconds > 0) || opts.runAt !== undefined)) {
    throw fail(
      opts.runAt === undefined ? 'delaySeconds' : 'runAt',
      'FIFO queues do not take a per-message delay; set DelaySeconds on the queue instead',
    );
  }
  if (!producer.fifo && opts.deduplicationId !== undefined) {
    throw fail('deduplicationId', 'applies only to FIFO (.fifo) queues; on standard queues the job id is the dedupe key');
  }
  if (opts.priority !== undefined && opts.priority !== 'normal' && !producer.tiers) {
    throw fail('priority', 'needs tier lanes: set the producer option tiers (lanes made by `sqs-jobs queues create --tiers`)');
  }
  if (opts.track && !producer.hasStore) {
    throw fail('track', 'needs a job store: set the producer option store ({ table }) or SQS_JOBS_JOB_TABLE');
  }
  const rule = KEY_RULES.find((r) => opts[r] !== undefined);
  if (rule === undefined) return;
  if (producer.fifo) throw fail(rule, 'FIFO queues order a group already; keys apply to standard queues');
  if (!producer.keepsKeys)
    throw fail(rule, 'needs a job store that keeps keys: set the producer option store ({ table }) or SQS_JOBS_JOB_TABLE');
  if (rule === 'debounce' && !producer.keepsTimed) throw fail(rule, 'needs a job store that keeps jobs until their time');
}

/** Keys apply to one job at a time: enqueueMany refuses them (a caller without types may pass them). */
export function refuseKeysInMany(jobName: string, opts: z.output<typeof enqueueOptionsSchema>): void {
  const rule = KEY_RULES.find((r) => opts[r] !== undefined);
  if (rule === undefined) return;
  throw new ValidationError('OPTIONS_INVALID', `invalid enqueueMany options for job "${jobName}"`, [
    { field: `options.${rule}`, rule: 'applies to enqueue, one job at a time, not to enqueueMany' },
  ]);
}
