import { EnqueueBatchError, SqsJobsError, toError } from '../core/errors.js';
import type { AnyDefinition } from '../core/job.js';
import { SQS_BATCH_LIMIT, SQS_DEFAULT_MESSAGE_BYTES } from '../core/sqs-limits.js';
import type { TraceContext } from '../core/trace-context.js';
import type { QueuePort } from '../ports/queue.js';
import type { JobStore } from '../ports/job-store.js';
import { keepUntilDue } from './keep.js';
import type { PreparedMessage } from './send-many.js';
import { recordWaiting } from '../status/waiting.js';
import type { Admission } from './admission/admission.js';
import type { PauseCheck } from './pause-check.js';
import type { EnqueueResult } from './options.js';
import { type EnqueueSettings, type Preparing, prepareMessage } from './prepare.js';
import type { QueueLimit } from './queue-limit.js';
import { outgoing, sendAll } from './send-many.js';
import { routeSpillover, type Spillover } from './spillover.js';

/** What sending jobs takes of a producer. */
export interface Sender {
  readonly p: Preparing;
  readonly queue: QueuePort;
  readonly queueLimit: QueueLimit;
  readonly admission: Admission | undefined;
  readonly spillover: Spillover | undefined;
  /** The job store: tracked jobs' records, and (its `timed`) jobs put off beyond SQS's delay. */
  readonly store: JobStore | undefined;
  /** With `whilePaused: 'refuse'`: refuses a job whose queue, job type or tenant is paused. */
  readonly pauses: PauseCheck | undefined;
}

/** Jobs put off beyond SQS's delay: kept until then (keep.ts), never sent now. */
function keptOnes(s: Sender, messages: readonly PreparedMessage[]) {
  const due = messages.filter((m): m is PreparedMessage & { dueMs: number } => m.dueMs !== undefined);
  if (due.length === 0) return undefined;
  // One time for all of one call (sendMany): all are kept, or none.
  if (due.length !== messages.length) throw new Error('unreachable: some of one call kept and some not');
  // prepareMessage refuses a job put off that long without a store that keeps it.
  const timed = s.store?.timed;
  if (timed === undefined || s.store === undefined) throw new Error('unreachable: a kept job without a store to keep it');
  return { due, store: { timed, status: s.store } };
}

/** Make, route and send one job (enqueue). Resolves once SQS has stored it, with where it went. */
export async function sendOne(
  s: Sender,
  definition: AnyDefinition,
  args: unknown,
  opts: EnqueueSettings,
  trace: TraceContext | undefined,
): Promise<EnqueueResult & { readonly queueUrl: string }> {
  return sendPrepared(s, definition, prepareMessage(s.p, definition, args, opts, 'args', trace), opts);
}

/** Send one job made already (sendOne; a keyed enqueue once its key said so). */
export async function sendPrepared(
  s: Sender,
  definition: AnyDefinition,
  prepared: PreparedMessage,
  opts: Pick<EnqueueSettings, 'tenant'>,
): Promise<EnqueueResult & { readonly queueUrl: string }> {
  await s.pauses?.refuse(definition.name, opts.tenant, prepared.queueUrl);
  const kept = keptOnes(s, [prepared]);
  if (kept !== undefined) {
    await s.queueLimit.check(); // sent later as it is: the queue must take it then
    const { failed } = await keepUntilDue(kept.store, definition, kept.due);
    if (failed.length > 0)
      throw new SqsJobsError('ENQUEUE_FAILED', `could not enqueue job "${definition.name}" (${prepared.jobId}): ${failed[0]!.message}`);
    return { jobId: prepared.jobId, messageId: undefined, queueUrl: prepared.queueUrl };
  }
  const [message] = await routeSpillover(s.spillover, [prepared], opts.tenant);
  if (message === undefined) throw new Error('unreachable: one message routed is one message');
  await s.queueLimit.check();
  s.admission?.admitAll([message]);
  try {
    const { messageId } = await s.queue.send(message.queueUrl, outgoing(message)).catch((error: unknown) => {
      s.admission?.sent(message.queueUrl, 0, 1);
      throw error;
    });
    s.admission?.sent(message.queueUrl, 1);
    await recordWaiting(s.store, definition.name, [message]);
    return { jobId: message.jobId, messageId, queueUrl: message.queueUrl };
  } catch (error) {
    const e = toError(error);
    throw new SqsJobsError(
      'ENQUEUE_FAILED',
      `could not enqueue job "${definition.name}" (${message.jobId}) to ${message.queueUrl}: ${e.name}: ${e.message}`,
      { cause: error },
    );
  }
}

/** Make, route and send many jobs of one definition (enqueueMany); what did not go is one EnqueueBatchError. */
export async function sendMany(
  s: Sender,
  definition: AnyDefinition,
  argsList: readonly unknown[],
  opts: EnqueueSettings,
  jobIds: readonly string[] | undefined,
  trace: TraceContext | undefined,
): Promise<EnqueueResult[]> {
  const nowMs = Date.now();
  const prepared = argsList.map((args, index) =>
    prepareMessage(s.p, definition, args, { ...opts, jobId: jobIds?.[index] }, `argsList[${index}]`, trace, nowMs),
  );
  if (prepared.length === 0) return [];
  // One job, tenant and priority for all: one queue, one answer.
  await s.pauses?.refuse(definition.name, opts.tenant, prepared[0]!.queueUrl);
  const kept = keptOnes(s, prepared);
  if (kept !== undefined) {
    await s.queueLimit.check();
    const done = await keepUntilDue(kept.store, definition, kept.due);
    const results = prepared.map((m) => ({ jobId: m.jobId, messageId: undefined }));
    if (done.failed.length > 0)
      throw new EnqueueBatchError(
        done.failed,
        results.flatMap((r, index) => (done.kept[index] ? [{ index, ...r }] : [])),
      );
    return results;
  }
  const messages = await routeSpillover(s.spillover, prepared, opts.tenant);
  await s.queueLimit.check();
  s.admission?.admitAll(messages);

  // Batches per destination queue (main, spillover), each split by 10 entries and by bytes.
  const maxBytes = Math.min(SQS_DEFAULT_MESSAGE_BYTES, s.p.maxMessageBytes * SQS_BATCH_LIMIT);
  const { results, failed } = await sendAll(s.queue, messages, maxBytes);
  messages.forEach((m, i) => {
    if (results[i] !== undefined) s.admission?.sent(m.queueUrl, 1);
    else s.admission?.sent(m.queueUrl, 0, 1);
  });
  await recordWaiting(
    s.store,
    definition.name,
    messages.filter((_, i) => results[i] !== undefined),
  );

  if (failed.length > 0) {
    const sent = results.flatMap((r, index) => (r === undefined ? [] : [{ index, jobId: r.jobId, messageId: r.messageId }]));
    throw new EnqueueBatchError(
      failed.sort((a, b) => a.index - b.index),
      sent,
    );
  }
  return results as EnqueueResult[];
}
