import type { Span, Tracer } from '@opentelemetry/api';
import { toError } from '../core/errors.js';
import { queueNameOf } from '../core/queue-url.js';
import type { TraceContext } from '../core/trace-context.js';
import { carriedFrom } from './otel-context.js';
import type { SendSpan, SendTracing } from '../ports/tracing.js';
import type { OtelApi } from './otel-api.js';
import * as sc from './otel-semconv.js';

/** A send span that does nothing (a tracer that threw). */
const NO_SPAN: SendSpan = { trace: undefined, sent: () => {}, failed: () => {} };

/**
 * SendTracing on OpenTelemetry: one `send <queue>` span (PRODUCER) per enqueue or enqueueMany
 * call, and one `send <topic>` per publish or publishMany. Nothing here throws: a span processor or sampler of the app's that throws costs the span,
 * never the send (nor a send reported failed after SQS took it).
 */
export class OtelSendTracing implements SendTracing {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;

  constructor(api: OtelApi) {
    this.#api = api;
    // Cached: the API makes a new proxy tracer on every getTracer() until an SDK is registered.
    this.#tracer = api.trace.getTracer('sqs-jobs');
  }

  send(queueUrl: string, jobName: string, count: number | undefined, tenant: string | undefined): SendSpan {
    return this.#start(
      queueNameOf(queueUrl),
      SQS,
      count,
      tenant,
      (span) => {
        span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, queueUrl);
        span.setAttribute(sc.ATTR_JOB_NAME, jobName);
      },
      queueUrl,
    );
  }

  publish(topic: string, eventName: string, count: number | undefined, tenant: string | undefined): SendSpan {
    return this.#start(topic, SNS, count, tenant, (span) => span.setAttribute(sc.ATTR_EVENT_NAME, eventName), undefined);
  }

  /** A PRODUCER span `send <destination>` under the caller's active context, and what its messages carry. */
  #start(
    destination: string,
    system: System,
    count: number | undefined,
    tenant: string | undefined,
    record: (span: Span) => void,
    queueUrl: string | undefined,
  ): SendSpan {
    try {
      const api = this.#api;
      const active = api.context.active();
      const span = this.#tracer.startSpan(
        `send ${destination}`,
        {
          kind: api.SpanKind.PRODUCER,
          attributes: {
            [sc.ATTR_MESSAGING_SYSTEM_NAME]: system.name,
            [sc.ATTR_MESSAGING_SYSTEM]: system.old,
            [sc.ATTR_MESSAGING_OPERATION_NAME]: 'send',
            [sc.ATTR_MESSAGING_OPERATION_TYPE]: 'send',
            [sc.ATTR_MESSAGING_DESTINATION_NAME]: destination,
          },
        },
        active,
      );
      if (span.isRecording()) {
        record(span);
        if (count !== undefined) span.setAttribute(sc.ATTR_MESSAGING_BATCH_MESSAGE_COUNT, count);
        if (tenant !== undefined) span.setAttribute(sc.ATTR_TENANT, tenant);
      }
      return new OtelSend(api, span, queueUrl, carriedFrom(api, span.spanContext(), active));
    } catch {
      return NO_SPAN;
    }
  }
}

/** The messaging system, by the conventions' current name and their older one (still written, for backends on those). */
interface System {
  readonly name: string;
  readonly old: string;
}
const SQS: System = { name: sc.MESSAGING_SYSTEM_NAME_AWS_SQS, old: sc.MESSAGING_SYSTEM_AWS_SQS };
const SNS: System = { name: sc.MESSAGING_SYSTEM_NAME_AWS_SNS, old: sc.MESSAGING_SYSTEM_NAME_AWS_SNS };

/** A send under way: the context its jobs carry, and how it ended. */
class OtelSend implements SendSpan {
  readonly #api: OtelApi;
  readonly #span: Span;
  /** The queue a send began with; undefined for a publish (its ids are an event's). */
  readonly #queueUrl: string | undefined;
  readonly trace: TraceContext | undefined;

  constructor(api: OtelApi, span: Span, queueUrl: string | undefined, trace: TraceContext | undefined) {
    this.#api = api;
    this.#span = span;
    this.#queueUrl = queueUrl;
    this.trace = trace;
  }

  sent(queueUrl: string | undefined, ids: { readonly jobId: string; readonly messageId: string | undefined } | undefined): void {
    try {
      const span = this.#span;
      if (span.isRecording()) {
        if (this.#queueUrl === undefined) {
          if (queueUrl !== undefined) span.setAttribute(sc.ATTR_AWS_SNS_TOPIC_ARN, queueUrl);
        } else if (queueUrl !== undefined && queueUrl !== this.#queueUrl) {
          const name = queueNameOf(queueUrl);
          span.updateName(`send ${name}`);
          span.setAttribute(sc.ATTR_MESSAGING_DESTINATION_NAME, name);
          span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, queueUrl);
        }
        if (ids !== undefined) {
          span.setAttribute(this.#queueUrl === undefined ? sc.ATTR_EVENT_ID : sc.ATTR_JOB_ID, ids.jobId);
          if (ids.messageId !== undefined) span.setAttribute(sc.ATTR_MESSAGING_MESSAGE_ID, ids.messageId);
        }
      }
      span.end();
    } catch {
      // the span is lost, the send stands
    }
  }

  failed(error: unknown, unsent?: number): void {
    try {
      const span = this.#span;
      if (span.isRecording()) {
        const e = toError(error);
        const code = (e as { code?: unknown }).code;
        span.setAttribute(sc.ATTR_ERROR_TYPE, typeof code === 'string' ? code : e.name);
        if (unsent !== undefined) span.setAttribute('sqs_jobs.unsent_count', unsent);
        span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: e.message });
      }
      span.end();
    } catch {
      // the span is lost; the send's own error is what the caller gets
    }
  }
}
