import type { Baggage, Context, Span, Tracer } from '@opentelemetry/api';
import { toError } from '../core/errors.js';
import { queueNameOf } from '../core/queue-url.js';
import { formatTraceparent, MAX_BAGGAGE, MAX_TRACESTATE, type TraceContext } from '../core/trace-context.js';
import type { OtelApi } from './otel-api.js';
import * as sc from './otel-semconv.js';
import type { SendSpan, SendTracing } from '../ports/tracing.js';

/** SendTracing on OpenTelemetry: one `send <queue>` span (PRODUCER) per enqueue or enqueueMany call. */
export class OtelSendTracing implements SendTracing {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;

  constructor(api: OtelApi) {
    this.#api = api;
    // Cached: the API makes a new proxy tracer on every getTracer() until an SDK is registered.
    this.#tracer = api.trace.getTracer('sqs-jobs');
  }

  /**
   * Start the send span of `jobName` to `queueUrl` under the active context: `count` jobs for
   * enqueueMany (undefined for enqueue). Its context is what the jobs carry (`trace`).
   */
  send(queueUrl: string, jobName: string, count: number | undefined, tenant: string | undefined): SendSpan {
    const api = this.#api;
    const active = api.context.active();
    const name = queueNameOf(queueUrl);
    const span = this.#tracer.startSpan(
      `send ${name}`,
      {
        kind: api.SpanKind.PRODUCER,
        attributes: {
          [sc.ATTR_MESSAGING_SYSTEM_NAME]: sc.MESSAGING_SYSTEM_NAME_AWS_SQS,
          [sc.ATTR_MESSAGING_SYSTEM]: sc.MESSAGING_SYSTEM_AWS_SQS,
          [sc.ATTR_MESSAGING_OPERATION_NAME]: 'send',
          [sc.ATTR_MESSAGING_OPERATION_TYPE]: 'send',
          [sc.ATTR_MESSAGING_DESTINATION_NAME]: name,
        },
      },
      active,
    );
    if (span.isRecording()) {
      span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, queueUrl);
      span.setAttribute(sc.ATTR_JOB_NAME, jobName);
      if (count !== undefined) span.setAttribute(sc.ATTR_MESSAGING_BATCH_MESSAGE_COUNT, count);
      if (tenant !== undefined) span.setAttribute(sc.ATTR_TENANT, tenant);
    }
    return new OtelSend(api, span, queueUrl, carried(api, span, active));
  }
}

/** A send under way: the context its jobs carry, and how it ended. */
class OtelSend implements SendSpan {
  constructor(
    private readonly api: OtelApi,
    private readonly span: Span,
    private readonly queueUrl: string,
    /** What the jobs carry: the span's own context, or the caller's when no SDK records spans; undefined when there is none. */
    readonly trace: TraceContext | undefined,
  ) {}

  /** Where the one job of enqueue() went (its tenant's queue, a lane, the spillover queue), and its ids. */
  sent(queueUrl: string, ids: { readonly jobId: string; readonly messageId: string } | undefined): void {
    if (this.span.isRecording()) {
      if (queueUrl !== this.queueUrl) {
        const name = queueNameOf(queueUrl);
        this.span.updateName(`send ${name}`);
        this.span.setAttribute(sc.ATTR_MESSAGING_DESTINATION_NAME, name);
        this.span.setAttribute(sc.ATTR_AWS_SQS_QUEUE_URL, queueUrl);
      }
      if (ids !== undefined) {
        this.span.setAttribute(sc.ATTR_JOB_ID, ids.jobId);
        this.span.setAttribute(sc.ATTR_MESSAGING_MESSAGE_ID, ids.messageId);
      }
    }
    this.span.end();
  }

  /** The send failed (all of it, or the `unsent` of enqueueMany's jobs). */
  failed(error: unknown, unsent?: number): void {
    if (this.span.isRecording()) {
      const e = toError(error);
      this.span.setAttribute(
        sc.ATTR_ERROR_TYPE,
        (e as { code?: unknown }).code === undefined ? e.name : String((e as { code?: unknown }).code),
      );
      if (unsent !== undefined) this.span.setAttribute('sqs_jobs.unsent_count', unsent);
      this.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: e.message });
    }
    this.span.end();
  }
}

/** The trace context a job sent under `span` carries: the span's (W3C), the tracestate, the caller's baggage. */
function carried(api: OtelApi, span: Span, active: Context): TraceContext | undefined {
  const s = span.spanContext();
  if (!api.trace.isSpanContextValid(s)) return undefined;
  const traceparent = formatTraceparent(s.traceId, s.spanId, (s.traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED);
  const tracestate = s.traceState?.serialize();
  const baggage = baggageText(api.propagation.getBaggage(active));
  return {
    traceparent,
    ...(tracestate && tracestate.length <= MAX_TRACESTATE ? { tracestate } : {}),
    ...(baggage ? { baggage } : {}),
  };
}

/** W3C baggage text of `baggage`, its entries in order while they fit MAX_BAGGAGE. */
function baggageText(baggage: Baggage | undefined): string | undefined {
  if (baggage === undefined) return undefined;
  let text = '';
  for (const [key, entry] of baggage.getAllEntries()) {
    const member = `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}${entry.metadata === undefined ? '' : `;${entry.metadata.toString()}`}`;
    const next = text === '' ? member : `${text},${member}`;
    if (next.length > MAX_BAGGAGE) break;
    text = next;
  }
  return text === '' ? undefined : text;
}
