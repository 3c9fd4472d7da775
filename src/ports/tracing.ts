import type { JobInfo } from '../core/job-events.js';
import type { TraceContext } from '../core/trace-context.js';

/**
 * Tracing as the producer sees it: one span per send call (enqueue, enqueueMany, publish,
 * publishMany), whose context the jobs and events carry. The OpenTelemetry adapter (adapters/otel-send.ts) is the one implementation.
 */
export interface SendTracing {
  /** Never throws (a tracer that fails gives a span that does nothing). A send of `count` jobs of `jobName` to `queueUrl` begins (`count` undefined: enqueue() of one), under the caller's active context. */
  send(queueUrl: string, jobName: string, count: number | undefined, tenant: string | undefined): SendSpan;
  /** Never throws. A publish of `count` events of `eventName` to the SNS topic named `topic` begins (`count` undefined: publish() of one). */
  publish(topic: string, eventName: string, count: number | undefined, tenant: string | undefined): SendSpan;
}

/** A send under way. None of its methods throws: tracing never stands in the way of a send. */
export interface SendSpan {
  /** What the jobs carry; undefined when there is no trace to carry. */
  readonly trace: TraceContext | undefined;
  /**
   * It went: to `queueUrl` (spillover may have sent the one job of enqueue() elsewhere; undefined:
   * where it began; a publish's: the topic's ARN), with its ids (a publish's: the event id as `jobId`).
   */
  sent(queueUrl: string | undefined, ids: { readonly jobId: string; readonly messageId: string | undefined } | undefined): void;
  /** It failed (all of it, or `unsent` of enqueueMany's jobs). */
  failed(error: unknown, unsent?: number): void;
}

/**
 * Tracing as the worker sees it: one span per run of a job's handler, a child of the context the
 * job was sent under. The OpenTelemetry adapter (adapters/otel-process.ts) is the one implementation.
 */
export interface ProcessTracing {
  /** A run of the job `info` begins; `trace` is what its message carries (its envelope's, else X-Ray's AWSTraceHeader). */
  process(info: JobInfo, trace: TraceContext | undefined): ProcessSpan;
  /** A call of a batch handler on `items` of `key` begins: a span of its own, linked to each item's sender. */
  processBatch(jobName: string, queueUrl: string, key: string, items: readonly BatchItemTrace[]): ProcessSpan;
  /** The active span's context (the run's, or one the handler made), for what is sent on its behalf later. Never throws. */
  active(): TraceContext | undefined;
  /** Run `fn` with the carried `trace` as its context, so a send inside continues that trace (no trace: as it is). Never throws of its own. */
  resume<T>(trace: TraceContext | undefined, fn: () => T): T;
}

/** One item of a batch handler's call: its run, and what its message carries. */
export interface BatchItemTrace {
  readonly info: JobInfo;
  readonly trace: TraceContext | undefined;
}

/** Attribute values an event may carry. */
type EventAttributes = Readonly<Record<string, string | number | boolean>>;

/** Something that happened to a run's message: a retry and its delay, the DLQ and its reason. */
export interface SpanEvent {
  readonly name: string;
  readonly attributes: EventAttributes;
}

/** A run under way. */
export interface ProcessSpan {
  /** Run `fn` (the handler) with this span active, so spans the handler makes nest under it. */
  within<T>(fn: () => T): T;
  /** Something happened to the run's messages (a batch item that failed alone, say). */
  note(event: SpanEvent): void;
  /** The run ended: `error` when it failed; `event`, what becomes of the message (a retry with its delay, the DLQ with its reason). */
  ended(error: Error | undefined, event?: SpanEvent): void;
}
