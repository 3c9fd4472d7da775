import { inBatches } from '../core/sqs-batch.js';
import type { QueuePort } from '../ports/queue.js';
import type { DeadLetter } from './dlq.js';
import { type SweepOptions, type SweepResult, sweepDeadLetters } from './sweep.js';

interface PurgeOptions extends SweepOptions {
  readonly onDeleted?: (letter: DeadLetter) => void;
}

interface PurgeResult extends SweepResult {
  readonly deleted: number;
}

/**
 * Delete the dead letters a filter matches, each at most once (a sweep: those dead-lettered after
 * it began stay). Unlike SQS's PurgeQueue it can choose, is not limited to once a minute, and
 * says how many it deleted; a dry run only counts them.
 */
export async function purgeDeadLetters(queue: QueuePort, o: PurgeOptions): Promise<PurgeResult> {
  const result = await sweepDeadLetters(queue, o, async (chosen) => {
    const failed = await inBatches(chosen, (batch) =>
      queue.deleteBatch(
        o.dlqUrl,
        batch.map(({ m }, i) => ({ id: String(i), receiptHandle: m.receiptHandle })),
      ),
    );
    const short = new Set(failed.map((f) => f.item));
    for (const c of chosen) if (!short.has(c)) o.onDeleted?.(c.letter);
    return failed.map((f) => ({ chosen: f.item, why: `SQS refused the delete: ${f.failure.code}` }));
  });
  return { ...result, deleted: result.done };
}
