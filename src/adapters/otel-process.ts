import type { Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import type { JobInfo } from '../core/job-events.js';
import { queueNameOf } from '../core/queue-url.js';
import type { TraceContext } from '../core/trace-context.js';
import type { BatchItemTrace, ProcessSpan, ProcessTracing, SpanEvent } from '../ports/tracing.js';
import type { OtelApi } from './otel-api.js';
import { carriedFrom, senderContext, withBaggage } from './otel-context.js';
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

  processBatch(jobName: string, queueUrl: string, key: string, items: readonly BatchItemTrace[]): ProcessSpan {
    const api = this.#api;
    const start = this.#startOf(queueUrl, jobName);
    // The conventions: a batch's messages may come from many traces, so its span starts a trace of
    // its own and links to each message's sender (with the message's ids on the link).
    const links = [];
    for (const { info, trace } of items) {
      const sender = trace === undefined ? undefined : senderContext(api, trace);
      if (sender !== undefined)
        links.push({ context: sender, attributes: { [sc.ATTR_MESSAGING_MESSAGE_ID]: info.messageId, [sc.ATTR_JOB_ID]: info.jobId } });
    }
    const span = this.#tracer.startSpan(start.name, links.length === 0 ? start.options : { ...start.options, links }, api.ROOT_CONTEXT);
    if (!span.isRecording() && links.length === 0) return NO_RUN;
    try {
      if (span.isRecording()) {
        span.setAttribute(sc.ATTR_MESSAGING_BATCH_MESSAGE_COUNT, items.length);
        span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, queueUrl);
        span.setAttribute(sc.ATTR_JOB_NAME, jobName);
        span.setAttribute(sc.ATTR_BATCH_KEY, key);
      }
      return new OtelProcess(api, span, api.trace.setSpan(api.ROOT_CONTEXT, span));
    } catch (error) {
      span.end(); // started, so ended: the call runs untraced
      throw error;
    }
  }

  active(): TraceContext | undefined {
    try {
      const api = this.#api;
      const active = api.context.active();
      const span = api.trace.getSpan(active);
      return span === undefined ? undefined : carriedFrom(api, span.spanContext(), active);
    } catch {
      return undefined;
    }
  }

  resume<T>(trace: TraceContext | undefined, fn: () => T): T {
    let context: Context | undefined;
    try {
      const api = this.#api;
      const sender = trace === undefined ? undefined : senderContext(api, trace);
      if (sender !== undefined) context = api.trace.setSpanContext(withBaggage(api, api.ROOT_CONTEXT, trace?.baggage), sender);
    } catch {
      context = undefined;
    }
    if (context === undefined) return fn();
    // fn's own throw is its caller's; a context manager's (before fn ran) only costs the trace.
    let called = false;
    try {
      return this.#api.context.with(context, () => {
        called = true;
        return fn();
      });
    } catch (error) {
      if (called) throw error;
      return fn();
    }
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
const NO_RUN: ProcessSpan = { within: (fn) => fn(), note: () => {}, ended: () => {} };

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

  note(event: SpanEvent): void {
    if (this.#span.isRecording()) this.#span.addEvent(event.name, event.attributes);
  }

  ended(error: Error | undefined, event?: SpanEvent): void {
    const span = this.#span;
    try {
      if (span.isRecording()) {
        if (error !== undefined) {
          span.recordException(error);
          span.setAttribute(sc.ATTR_ERROR_TYPE, error.name);
          span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: error.message });
        }
        // After the exception: what became of the message, once it failed.
        if (event !== undefined) span.addEvent(event.name, event.attributes);
      }
    } finally {
      span.end();
    }
  }
}
