import type { JobInfo } from '../../core/job-events.js';
import type { TraceContext } from '../../core/trace-context.js';
import type { ProcessSpan } from '../../ports/tracing.js';
import type { WorkerContext } from '../context.js';
import type { Outcome } from '../fate/decide.js';

/** The span of a run that begins (tracing is on); a tracer that throws is reported, and the job runs untraced. */
export function spanFor(ctx: WorkerContext, info: JobInfo, trace: TraceContext | undefined): ProcessSpan | undefined {
  try {
    return ctx.tracing?.process(info, trace);
  } catch (error) {
    ctx.onError('tracing', error);
    return undefined;
  }
}

/** End a run's span (see spanEnd); a tracer that throws is reported, never in the way of the message's fate. */
export function endSpan(ctx: WorkerContext, span: ProcessSpan, outcome: Outcome): void {
  try {
    spanEnd(span, outcome);
  } catch (error) {
    ctx.onError('tracing', error);
  }
}

/**
 * End a run's span with its outcome: the error the run failed with (status ERROR), and what
 * becomes of the message as an event (a retry and its delay, the DLQ and its reason, a lost
 * lease, a hand-back, a cancel). A success ends it with neither.
 */
function spanEnd(span: ProcessSpan, outcome: Outcome): void {
  switch (outcome.kind) {
    case 'succeeded':
      span.ended(undefined);
      return;
    case 'retry':
      span.ended(outcome.error, { name: 'sqs_jobs.retry', attributes: { 'sqs_jobs.retry.delay_ms': outcome.delayMs } });
      return;
    case 'dead-letter':
      span.ended(outcome.error ?? new Error(outcome.detail), {
        name: 'sqs_jobs.dead_letter',
        attributes: { 'sqs_jobs.dead_letter.reason': outcome.reason, 'sqs_jobs.dead_letter.detail': outcome.detail },
      });
      return;
    case 'lost':
      span.ended(new Error(outcome.reason), { name: 'sqs_jobs.lease_lost', attributes: { 'sqs_jobs.reason': outcome.reason } });
      return;
    case 'hand-back':
      // Not a failure of the job (a stop, a claim it could not make): said, not marked an error.
      span.ended(undefined, {
        name: 'sqs_jobs.handed_back',
        attributes: { 'sqs_jobs.reason': outcome.reason, 'sqs_jobs.delay_seconds': outcome.delaySeconds },
      });
      return;
    case 'cancelled':
      span.ended(undefined, { name: 'sqs_jobs.cancelled', attributes: { 'sqs_jobs.reason': outcome.reason } });
      return;
    default:
      // Decided before a handler runs (a duplicate, a deferral, a wait): no run, so no span ends with them.
      span.ended(undefined);
  }
}
