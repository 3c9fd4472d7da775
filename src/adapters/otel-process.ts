import type { Context, Span, SpanContext, SpanOptions, Tracer } from '@opentelemetry/api';
import type { JobInfo } from '../core/job-events.js';
import { queueNameOf } from '../core/queue-url.js';
import { parseTraceparent, type TraceContext } from '../core/trace-context.js';
import type { EventAttributes, ProcessSpan, ProcessTracing } from '../ports/tracing.js';
import type { OtelApi } from './otel-api.js';
import * as sc from './otel-semconv.js';

/**
 * ProcessTracing on OpenTelemetry: `process <job>` (CONSUMER) around each run of a handler. Its
 * parent is the context the job was sent under (the conventions allow it for one message, and a
 * worker has no span of its own around the run), which it also links to; its baggage is the
 * sender's. A job without a trace context starts a trace of its own.
 */
export class OtelProcessTracing implements ProcessTracing {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  /** Per queue and job: the span's name and the options of a run without a sender, made once (not per run). */
  readonly #starts = new Map<string, Map<string, { readonly name: string; readonly options: SpanOptions }>>();

  constructor(api: OtelApi) {
    this.#api = api;
    this.#tracer = api.trace.getTracer('sqs-jobs');
  }

  process(info: JobInfo, trace: TraceContext | undefined): ProcessSpan {
    const api = this.#api;
    const start = this.#startOf(info.queueUrl, info.jobName);
    const sender = trace === undefined ? undefined : senderContext(api, trace);
    if (sender === undefined) {
      const span = this.#tracer.startSpan(start.name, start.options, api.ROOT_CONTEXT);
      // No SDK (or not sampled) and nothing to carry on: one shared span that does nothing.
      if (!span.isRecording()) return NO_RUN;
      recordRun(span, info);
      return new OtelProcess(api, span, api.trace.setSpan(api.ROOT_CONTEXT, span));
    }
    const parent = api.trace.setSpanContext(withBaggage(api, api.ROOT_CONTEXT, trace?.baggage), sender);
    const span = this.#tracer.startSpan(start.name, { ...start.options, links: [{ context: sender }] }, parent);
    if (span.isRecording()) recordRun(span, info);
    return new OtelProcess(api, span, api.trace.setSpan(parent, span));
  }

  #startOf(queueUrl: string, jobName: string): { readonly name: string; readonly options: SpanOptions } {
    let byJob = this.#starts.get(queueUrl);
    if (byJob === undefined) {
      byJob = new Map();
      this.#starts.set(queueUrl, byJob);
    }
    let start = byJob.get(jobName);
    if (start === undefined) {
      start = {
        name: `process ${jobName}`,
        // What samplers see at the start (the conventions ask for these there): the same for every run of this job on this queue.
        options: {
          kind: this.#api.SpanKind.CONSUMER,
          attributes: Object.freeze({
            [sc.ATTR_MESSAGING_SYSTEM_NAME]: sc.MESSAGING_SYSTEM_NAME_AWS_SQS,
            [sc.ATTR_MESSAGING_SYSTEM]: sc.MESSAGING_SYSTEM_AWS_SQS,
            [sc.ATTR_MESSAGING_OPERATION_NAME]: 'process',
            [sc.ATTR_MESSAGING_OPERATION_TYPE]: 'process',
            [sc.ATTR_MESSAGING_DESTINATION_NAME]: queueNameOf(queueUrl),
          }),
        },
      };
      byJob.set(jobName, start);
    }
    return start;
  }
}

/** A run's own attributes, on a span that records. */
function recordRun(span: Span, info: JobInfo): void {
  span.setAttribute(sc.ATTR_MESSAGING_MESSAGE_ID, info.messageId);
  span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, info.queueUrl);
  span.setAttribute(sc.ATTR_JOB_NAME, info.jobName);
  span.setAttribute(sc.ATTR_JOB_ID, info.jobId);
  span.setAttribute(sc.ATTR_ATTEMPT, info.attempt);
  if (info.tenant !== undefined) span.setAttribute(sc.ATTR_TENANT, info.tenant);
}

/** The run of a job with no trace to continue, when spans are not recorded: nothing to do. */
const NO_RUN: ProcessSpan = { within: (fn) => fn(), ended: () => {} };

class OtelProcess implements ProcessSpan {
  readonly #api: OtelApi;
  readonly #span: Span;
  readonly #context: Context;

  constructor(api: OtelApi, span: Span, context: Context) {
    this.#api = api;
    this.#span = span;
    this.#context = context;
  }

  within<T>(fn: () => T): T {
    return this.#api.context.with(this.#context, fn);
  }

  ended(error: Error | undefined, event?: { readonly name: string; readonly attributes: EventAttributes }): void {
    const span = this.#span;
    if (span.isRecording()) {
      if (error !== undefined) {
        span.recordException(error);
        span.setAttribute(sc.ATTR_ERROR_TYPE, error.name);
        span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: error.message });
      }
      // After the exception: what became of the message, once it failed.
      if (event !== undefined) span.addEvent(event.name, event.attributes);
    }
    span.end();
  }
}

/** The sender's span context from a job's trace context (remote); undefined when its traceparent is not W3C's. */
function senderContext(api: OtelApi, trace: TraceContext): SpanContext | undefined {
  const parsed = parseTraceparent(trace.traceparent);
  if (parsed === undefined) return undefined;
  let traceState: SpanContext['traceState'];
  if (trace.tracestate !== undefined) {
    try {
      traceState = api.createTraceState(trace.tracestate);
    } catch {
      traceState = undefined;
    }
  }
  return {
    traceId: parsed.traceId,
    spanId: parsed.spanId,
    traceFlags: parsed.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
    isRemote: true,
    ...(traceState === undefined ? {} : { traceState }),
  };
}

/** `context` with the W3C baggage `text` (members it cannot read are skipped). */
function withBaggage(api: OtelApi, context: Context, text: string | undefined): Context {
  if (text === undefined || text === '') return context;
  const entries = new Map<string, { value: string }>();
  for (const member of text.split(',')) {
    const [pair] = member.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair === undefined || eq <= 0) continue;
    try {
      entries.set(decodeURIComponent(pair.slice(0, eq).trim()), { value: decodeURIComponent(pair.slice(eq + 1).trim()) });
    } catch {
      // a member that is not percent-encoded text: skipped
    }
  }
  // Object.fromEntries makes own properties: a member named __proto__ stays a member.
  return entries.size === 0 ? context : api.propagation.setBaggage(context, api.propagation.createBaggage(Object.fromEntries(entries)));
}
