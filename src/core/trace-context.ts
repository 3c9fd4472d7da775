import { z } from 'zod';

/**
 * A job's trace context on the wire (the envelope's optional `trace`): the W3C Trace Context and
 * Baggage header values, as any language's propagators write and read them. The producer writes
 * the context its send span ran under; every re-send of the job (a retry, a spillover, a cap
 * deferral, a DLQ replay) carries the body, and so the context, unchanged.
 */
export interface TraceContext {
  /** `00-<trace id>-<parent span id>-<flags>` (W3C traceparent, version 00). */
  readonly traceparent: string;
  /** W3C tracestate, at most MAX_TRACESTATE characters. */
  readonly tracestate?: string;
  /** W3C baggage, at most MAX_BAGGAGE characters. */
  readonly baggage?: string;
}

/**
 * W3C traceparent: version 00 exactly; a later version (never ff) by its version-00 prefix, as
 * W3C asks of a reader that knows only 00. Ids of lowercase hex digits, neither all zeros.
 */
const TRACEPARENT =
  /^(?:00-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}|(?!ff|00)[\da-f]{2}-(?!0{32})[\da-f]{32}-(?!0{16})[\da-f]{16}-[\da-f]{2}(?:-[\x21-\x7e]*)?)$/;
/** W3C asks propagators to keep at least 512 characters of tracestate. */
export const MAX_TRACESTATE = 512;
/** Well under W3C's 8,192 bytes: the whole message is at most 256 KiB, and baggage rides on every re-send. */
export const MAX_BAGGAGE = 2048;
/** Printable ASCII and tabs (W3C allows optional whitespace around members). */
const HEADER_TEXT = /^[\t\x20-\x7e]*$/;

const optionalHeader = (max: number) => z.string().max(max).regex(HEADER_TEXT).optional().catch(undefined);

/**
 * The envelope's `trace` as read: a malformed one (wrong type, a traceparent that is not W3C's,
 * an oversized tracestate) is dropped, never poison: a job is not lost to its telemetry.
 */
export const traceContextSchema = z
  .object({ traceparent: z.string().regex(TRACEPARENT), tracestate: optionalHeader(MAX_TRACESTATE), baggage: optionalHeader(MAX_BAGGAGE) })
  .optional()
  .catch(undefined);

/** The W3C parts of a traceparent that TRACEPARENT accepted. */
export function parseTraceparent(traceparent: string): { traceId: string; spanId: string; sampled: boolean } | undefined {
  if (!TRACEPARENT.test(traceparent)) return undefined;
  return {
    traceId: traceparent.slice(3, 35),
    spanId: traceparent.slice(36, 52),
    sampled: (Number.parseInt(traceparent.slice(53, 55), 16) & 1) === 1,
  };
}

/** A traceparent for these ids. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

const XRAY_ROOT = /^1-([\da-f]{8})-([\da-f]{24})$/;
const SPAN_ID = /^(?!0{16})[\da-f]{16}$/;

/**
 * The trace context of an X-Ray `AWSTraceHeader` (`Root=1-<8 hex>-<24 hex>;Parent=<16 hex>;Sampled=<0|1>`),
 * for messages whose producer only has X-Ray: the W3C trace id is the root's two hex parts joined.
 * Undefined when the root or the parent is missing or malformed; a missing or `?` Sampled reads as
 * not sampled.
 */
export function fromAwsTraceHeader(header: string | undefined): TraceContext | undefined {
  if (header === undefined || header.length > 256) return undefined;
  const fields = new Map<string, string>();
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const root = XRAY_ROOT.exec(fields.get('Root') ?? '');
  const parent = fields.get('Parent') ?? '';
  if (root === null || !SPAN_ID.test(parent)) return undefined;
  const traceId = root[1]! + root[2]!;
  if (/^0{32}$/.test(traceId)) return undefined;
  return { traceparent: formatTraceparent(traceId, parent, fields.get('Sampled') === '1') };
}
