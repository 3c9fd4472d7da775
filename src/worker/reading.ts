import type { Envelope, PoisonReason } from '../core/envelope.js';
import type { ReceivedMessage } from '../core/message.js';
import { fromAwsTraceHeader, type TraceContext } from '../core/trace-context.js';
import type { AnyDefinition } from '../core/job.js';
import { type AnyBatchJob, isBatchJob } from '../core/batch-job.js';
import type { JobInfo } from '../core/job-events.js';

/** What reading a message gave: a registered job with valid args, or poison. */
export type Reading =
  | { readonly ok: true; readonly envelope: Envelope; readonly job: AnyDefinition; readonly args: unknown; readonly info: JobInfo }
  /** `envelope`: when the body was an envelope (an unknown job, invalid args): a fan-out child's end is still counted. */
  | { readonly ok: false; readonly reason: PoisonReason; readonly detail: string; readonly info: JobInfo; readonly envelope?: Envelope };
export type GoodReading = Extract<Reading, { ok: true }>;

/** The trace context a message carries: its envelope's, else the X-Ray header SQS kept with it. */
export function carriedBy(read: Reading, m: ReceivedMessage): TraceContext | undefined {
  return read.envelope?.trace ?? fromAwsTraceHeader(m.awsTraceHeader);
}

/** The batch job a reading is for; undefined for an ordinary job's message, or one that did not read. */
export function batchJobOf(read: Reading | undefined): AnyBatchJob | undefined {
  return read?.ok === true && isBatchJob(read.job) ? read.job : undefined;
}
