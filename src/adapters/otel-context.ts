import type { Baggage, Context, SpanContext } from '@opentelemetry/api';
import { formatTraceparent, MAX_BAGGAGE, MAX_TRACESTATE, parseTraceparent, type TraceContext } from '../core/trace-context.js';
import type { OtelApi } from './otel-api.js';

/**
 * Between OpenTelemetry's context and the trace context a job carries (core/trace-context.ts):
 * what a span sends along (its W3C traceparent and tracestate, the caller's baggage), and the
 * remote context a carried one stands for on the other side.
 */

/** The trace context a job sent under the span `s` carries, with the baggage of `active`; undefined when `s` is not a valid span. */
export function carriedFrom(api: OtelApi, s: SpanContext, active: Context): TraceContext | undefined {
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

/**
 * W3C baggage text of `baggage`: each member `key=value`, percent-encoded, while they fit in
 * MAX_BAGGAGE (one too long is left out, the rest still go). Member properties are not carried.
 */
function baggageText(baggage: Baggage | undefined): string | undefined {
  if (baggage === undefined) return undefined;
  let text = '';
  for (const [key, entry] of baggage.getAllEntries()) {
    const member = `${encodeURIComponent(key)}=${encodeURIComponent(entry.value)}`;
    const next = text === '' ? member : `${text},${member}`;
    if (next.length <= MAX_BAGGAGE) text = next;
  }
  return text === '' ? undefined : text;
}

/** The sender's span context from a job's trace context (remote); undefined when its traceparent is not W3C's. */
export function senderContext(api: OtelApi, trace: TraceContext): SpanContext | undefined {
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
export function withBaggage(api: OtelApi, context: Context, text: string | undefined): Context {
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
