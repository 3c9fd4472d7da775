import type { TraceContext } from '../core/trace-context.js';

/**
 * Tracing as the producer sees it: one span per send call (enqueue, enqueueMany), whose context
 * the jobs carry. The OpenTelemetry adapter (adapters/otel-send.ts) is the one implementation.
 */
export interface SendTracing {
  /** A send of `count` jobs of `jobName` to `queueUrl` begins (`count` undefined: enqueue() of one), under the caller's active context. */
  send(queueUrl: string, jobName: string, count: number | undefined, tenant: string | undefined): SendSpan;
}

/** A send under way. */
export interface SendSpan {
  /** What the jobs carry; undefined when there is no trace to carry. */
  readonly trace: TraceContext | undefined;
  /** It went: to `queueUrl` (the one job of enqueue() may go to its tenant's queue, a lane, the spillover queue), with its ids. */
  sent(queueUrl: string, ids: { readonly jobId: string; readonly messageId: string } | undefined): void;
  /** It failed (all of it, or `unsent` of enqueueMany's jobs). */
  failed(error: unknown, unsent?: number): void;
}
