import { derivedJobId } from '../core/envelope.js';
import { z } from 'zod';
import { type AnyDefinition, defineJob } from '../core/job.js';
import type { JobRegistry } from '../core/job-registry.js';
import { isFifoQueue } from '../core/queue-url.js';
import type { CompletionSpec, FanOutStatus, FanOutStore } from '../ports/fan-out-store.js';
import type { Producer } from '../producer/producer.js';
import type { ProcessTracing } from '../ports/tracing.js';

/** What a fan-out's completion job gets (merged over the `args` given to onComplete). */
export const fanOutResultSchema = z.object({
  parentId: z.string(),
  total: z.number().int(),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
/**
 * What a fan-out's completion job gets besides its own args: the parent's job id, its number of
 * children (`total`), and how many `succeeded` and `failed` (dead-lettered or cancelled).
 */
type FanOutResult = z.output<typeof fanOutResultSchema>;

/** Where a completion goes: the store that marks it sent, a producer per queue (on the worker's queue port), and the worker's jobs. */
export interface CompletionDeps {
  readonly store: FanOutStore;
  readonly producer: (queueUrl: string) => Producer;
  readonly jobs: JobRegistry;
  /** When tracing is on: the parent run's trace is kept with the fan-out, and its completion is sent in it. */
  readonly tracing?: ProcessTracing | undefined;
}

/**
 * The completion job as the producer sends it: this worker's definition of it, or, for a job
 * another service runs (named by string in onComplete), one known by name only. Its args were
 * checked against its schema, where known, when the fan-out opened; the producer still checks that
 * they are an object, encodes them, and checks the message's size.
 */
function completionJob(jobs: JobRegistry, name: string): AnyDefinition {
  return (
    jobs.find(name) ??
    defineJob({
      name,
      args: z.looseObject({}),
      handle: () => {
        throw new Error(`job "${name}" is run by another worker; this one only sends it`);
      },
    })
  );
}

/** The completion's args and enqueue options: `{ ...args, parentId, total, succeeded, failed }`, its derived id, and on FIFO its group. */
function completionMessage(parentId: string, spec: CompletionSpec, counts: Pick<FanOutStatus, 'total' | 'succeeded' | 'failed'>) {
  const result: FanOutResult = { parentId, total: counts.total, succeeded: counts.succeeded, failed: counts.failed };
  return {
    args: { ...spec.args, ...result },
    options: { jobId: derivedJobId(parentId, 'done'), ...(isFifoQueue(spec.queueUrl) ? { groupId: parentId.slice(0, 128) } : {}) },
  };
}

/**
 * Check, when a fan-out of `total` children opens, that its completion job can be sent once they
 * have ended: by `job`'s schema (the definition onComplete gave, else this worker's, else by name
 * only) and by the size of its message, as if every child succeeded. Throws as enqueue() would.
 */
export function checkCompletion(
  deps: CompletionDeps,
  parentId: string,
  spec: CompletionSpec,
  job: AnyDefinition | undefined,
  total: number,
): void {
  const { args, options } = completionMessage(parentId, spec, { total, succeeded: total, failed: 0 });
  deps.producer(spec.queueUrl).check(job ?? completionJob(deps.jobs, spec.job), args, options);
}

/**
 * Send a fan-out's completion job (once claimed in the store) through the producer, then mark it
 * sent. Its job id is derived from the parent's, so a second send after a crash between the two
 * steps is a duplicate the dedupe lock drops; on a FIFO queue the parent's id is its group.
 */
export async function sendCompletion(
  deps: CompletionDeps,
  parentId: string,
  spec: CompletionSpec,
  status: Pick<FanOutStatus, 'total' | 'succeeded' | 'failed'>,
): Promise<void> {
  if (spec.job !== '') {
    const { args, options } = completionMessage(parentId, spec, status);
    const send = () => deps.producer(spec.queueUrl).enqueue(completionJob(deps.jobs, spec.job), args, options);
    // Sent by whichever worker counted the last child: in the parent's trace, not that child's.
    await (deps.tracing === undefined ? send() : deps.tracing.resume(spec.trace, send));
  }
  await deps.store.completionSent(parentId);
}
