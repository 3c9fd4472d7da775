import type { JobInfo } from '../../core/job-events.js';
import type { TraceContext } from '../../core/trace-context.js';
import type { ReceivedMessage } from '../../core/message.js';
import { carriedBy, type Reading } from '../reading.js';
import type { BatchItemTrace, ProcessSpan, SpanEvent } from '../../ports/tracing.js';
import type { RunNeeds } from '../context.js';
import type { Outcome } from '../decide/decide.js';

/** The span of a run that begins (tracing is on); a tracer that throws is reported, and the job runs untraced. */
export function spanFor(ctx: RunNeeds, info: JobInfo, trace: TraceContext | undefined): ProcessSpan | undefined {
  try {
    return ctx.tracing?.process(info, trace);
  } catch (error) {
    ctx.report.onError('tracing', error);
    return undefined;
  }
}

/** The span of a batch handler's call on `items` (tracing is on); a tracer that throws is reported, and the call runs untraced. */
export function batchSpanFor(
  ctx: RunNeeds,
  jobName: string,
  queueUrl: string,
  key: string,
  items: readonly BatchItemTrace[],
): ProcessSpan | undefined {
  try {
    return ctx.tracing?.processBatch(jobName, queueUrl, key, items);
  } catch (error) {
    ctx.report.onError('tracing', error);
    return undefined;
  }
}

/** End a run's span with its outcome (see endOf); a tracer that throws is reported, never in the way of the message's fate. */
export function endSpan(ctx: RunNeeds, span: ProcessSpan, outcome: Outcome): void {
  try {
    const { error, event } = endOf(outcome);
    span.ended(error, event);
  } catch (error) {
    ctx.report.onError('tracing', error);
  }
}

/**
 * A message that ends without a run, when that is worth a line in its trace: a duplicate skipped
 * (another message carries the job, or it ran already), a poisonous message dead-lettered. A span
 * that begins and ends at once, with what became of it; a deferral or a wait is not one (the run
 * that follows is).
 */
export function unrunSpan(ctx: RunNeeds, info: JobInfo, read: Reading, m: ReceivedMessage, outcome: Outcome): void {
  if (ctx.tracing === undefined || (outcome.kind !== 'duplicate' && outcome.kind !== 'dead-letter')) return;
  const span = spanFor(ctx, info, carriedBy(read, m));
  if (span !== undefined) endSpan(ctx, span, outcome);
}

/**
 * End a batch handler's span: when the call failed as a whole (`whole`), with the first item's
 * outcome (every item shares it, unless one's lease was lost meanwhile); one event per item that
 * did not end so (with its job id), such as an item the handler reported failed alone.
 */
export function endBatchSpan(
  ctx: RunNeeds,
  span: ProcessSpan,
  whole: boolean,
  items: readonly { readonly info: JobInfo; readonly outcome: Outcome }[],
): void {
  // The call failed as a whole (it threw, timed out, was stopped): the span ends as the first
  // item does (an error, or a hand-back that is none), and only items that ended otherwise are noted.
  const first = whole && items.length > 0 ? endOf(items[0]!.outcome) : {};
  try {
    for (const { info, outcome } of items) {
      const { error, event } = endOf(outcome);
      if (event === undefined || (whole && outcome.kind === items[0]!.outcome.kind)) continue;
      span.note({
        name: event.name,
        attributes: {
          ...event.attributes,
          'sqs_jobs.job.id': info.jobId,
          ...(error === undefined ? {} : { 'sqs_jobs.error.message': error.message }),
        },
      });
    }
  } catch (error) {
    ctx.report.onError('tracing', error);
  } finally {
    try {
      span.ended(first.error, first.event);
    } catch (error) {
      ctx.report.onError('tracing', error);
    }
  }
}

/**
 * How a run's span ends with its outcome: the error the run failed with (status ERROR), and what
 * becomes of the message as an event (a retry and its delay, the DLQ and its reason, a lost
 * lease, a hand-back, a cancel, a duplicate skipped). A success ends it with neither.
 */
function endOf(outcome: Outcome): { error?: Error; event?: SpanEvent } {
  switch (outcome.kind) {
    case 'succeeded':
      return {};
    case 'retry':
      return { error: outcome.error, event: { name: 'sqs_jobs.retry', attributes: { 'sqs_jobs.retry.delay_ms': outcome.delayMs } } };
    case 'dead-letter':
      return {
        error: outcome.error ?? new Error(outcome.detail),
        event: {
          name: 'sqs_jobs.dead_letter',
          attributes: { 'sqs_jobs.dead_letter.reason': outcome.reason, 'sqs_jobs.dead_letter.detail': outcome.detail },
        },
      };
    case 'lost':
      return {
        error: new Error(outcome.reason),
        event: { name: 'sqs_jobs.lease_lost', attributes: { 'sqs_jobs.reason': outcome.reason } },
      };
    case 'hand-back':
      // Not a failure of the job (a stop, a claim it could not make): said, not marked an error.
      return {
        event: {
          name: 'sqs_jobs.handed_back',
          attributes: { 'sqs_jobs.reason': outcome.reason, 'sqs_jobs.delay_seconds': outcome.delaySeconds },
        },
      };
    case 'cancelled':
      return { event: { name: 'sqs_jobs.cancelled', attributes: { 'sqs_jobs.reason': outcome.reason } } };
    case 'duplicate':
      return { event: { name: 'sqs_jobs.duplicate_skipped', attributes: { 'sqs_jobs.duplicate.state': outcome.state } } };
    default:
      // A deferral or a wait: decided before a handler runs, and no span ends with them.
      return {};
  }
}
