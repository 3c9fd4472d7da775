import { toError } from '../core/errors.js';
import type { FailedEntry } from '../core/errors.js';
import type { AnyDefinition } from '../core/job.js';
import type { StatusStore } from '../ports/status-store.js';
import type { TimedJobStore } from '../ports/timed-jobs.js';
import { recordScheduled } from '../status/waiting.js';
import type { PreparedMessage } from './send-many.js';

/** Jobs kept at once (each one conditional write, and a `scheduled` record when tracked). */
const AT_ONCE = 25;

/**
 * Keep jobs put off beyond SQS's delay in the job store until their time (`dueMs`): the message as
 * made (its tenant's group too), sent by the workers' tick shortly before then. Spillover and
 * admission do not apply to them: the tick sends them as they were made, to the queue they were made for. A job id kept already stays as it was (enqueue is
 * idempotent by job id). Answers, by position, the ones kept and the ones that failed.
 */
export async function keepUntilDue(
  store: { readonly timed: TimedJobStore; readonly status: StatusStore },
  definition: AnyDefinition,
  messages: readonly (PreparedMessage & { readonly dueMs: number })[],
): Promise<{ kept: boolean[]; failed: FailedEntry[] }> {
  const kept: boolean[] = new Array(messages.length).fill(false);
  const failed: FailedEntry[] = [];
  let next = 0;
  const keep = async () => {
    while (next < messages.length) {
      const index = next++;
      const m = messages[index]!;
      try {
        await store.timed.putTimed({
          jobId: m.jobId,
          jobName: definition.name,
          queueUrl: m.queueUrl,
          message: { body: m.body, attributes: m.attributes, ...(m.groupId === undefined ? {} : { groupId: m.groupId }) },
          dueMs: m.dueMs,
          tracked: m.track !== undefined,
          enqueuedAt: m.track?.enqueuedAt ?? new Date().toISOString(),
        });
        kept[index] = true;
      } catch (error) {
        const e = toError(error);
        failed.push({ index, jobId: m.jobId, code: e.name, message: `could not keep it in the job store: ${e.message}` });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, messages.length) }, keep));
  await recordScheduled(
    store.status,
    definition.name,
    messages.filter((_, i) => kept[i]),
  );
  return { kept, failed: failed.sort((a, b) => a.index - b.index) };
}
