import { z } from 'zod';

/** SQS's and Lambda's own limits the settings are checked against. */
const LAMBDA_MAX_TIMEOUT_SECONDS = 900;
const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/**
 * How the jobs run with `runtime: 'lambda'`: the function (its timeout and memory) and its SQS
 * event source mapping (records per batch, how long a batch is gathered, how many invocations at
 * once). The queue's visibility timeout is six times the function's timeout unless given (AWS's
 * guidance: a record is retried up to that often while a throttled invocation waits).
 */
export const lambdaSettingSchema = z
  .object({
    /** The function's timeout; default twice p99ProcessingSeconds (at least 10 s, at most 900). */
    timeoutSeconds: z.number().int().min(3).max(LAMBDA_MAX_TIMEOUT_SECONDS, 'must be <= 900 (Lambda limit)').optional(),
    /** The queue's visibility timeout; default six times the function's timeout (at most 12 hours). */
    visibilityTimeoutSeconds: z.number().int().min(3).max(SQS_MAX_VISIBILITY_SECONDS, 'must be <= 43200 (SQS limit)').optional(),
    memoryMiB: z.number().int().min(128).max(10_240).default(1024),
    /** Records per invocation: up to 10, or up to 10,000 with a batching window. */
    batchSize: z.number().int().min(1).max(10_000).default(10),
    maxBatchingWindowSeconds: z.number().int().min(0).max(300).default(0),
    /** Invocations at once, per queue (the mapping's maximum concurrency, 2-1000). */
    maxConcurrency: z.number().int().min(2).max(1_000).default(10),
  })
  .strict();

export type LambdaSettings = z.output<typeof lambdaSettingSchema>;

/** The function's timeout: the setting, else twice the p99 handler time (10-900 s). */
export function functionTimeoutSeconds(s: { readonly lambda: LambdaSettings; readonly p99ProcessingSeconds: number }): number {
  return s.lambda.timeoutSeconds ?? Math.min(LAMBDA_MAX_TIMEOUT_SECONDS, Math.max(10, Math.ceil(2 * s.p99ProcessingSeconds)));
}

/** The queue's visibility timeout on Lambda: the setting, else six times the function's timeout. */
export function lambdaVisibilitySeconds(s: { readonly lambda: LambdaSettings; readonly p99ProcessingSeconds: number }): number {
  return s.lambda.visibilityTimeoutSeconds ?? Math.min(SQS_MAX_VISIBILITY_SECONDS, 6 * functionTimeoutSeconds(s));
}

type Issue = { path: (string | number)[]; message: string };

/** What cannot be deployed on Lambda, with the setting to change: a synth error each. */
export function lambdaSettingsIssues(s: {
  readonly lambda: LambdaSettings;
  readonly p99ProcessingSeconds: number;
  readonly jobStore: false | { readonly schedules: boolean };
  readonly scheduler: string;
  readonly dlqArchive: unknown;
}): Issue[] {
  const issues: Issue[] = [];
  const timeout = functionTimeoutSeconds(s);
  const visibility = lambdaVisibilitySeconds(s);
  if (visibility < timeout)
    issues.push({
      path: ['lambda', 'visibilityTimeoutSeconds'],
      message: `must be at least the function's timeout (${timeout} s): else a record comes back while its job still runs`,
    });
  if (s.lambda.batchSize > 10 && s.lambda.maxBatchingWindowSeconds < 1)
    issues.push({
      path: ['lambda', 'maxBatchingWindowSeconds'],
      message: 'must be >= 1 for a batchSize over 10 (an SQS event source mapping rule)',
    });
  if (s.jobStore !== false && s.jobStore.schedules && s.scheduler === 'workers')
    issues.push({
      path: ['scheduler'],
      message: "must be 'eventbridge' with runtime 'lambda': the workers' schedule tick needs a process that keeps running",
    });
  if (s.dlqArchive !== false)
    issues.push({ path: ['dlqArchive'], message: "not with runtime 'lambda' yet: the archive runs as a Fargate task of the worker image" });
  return issues;
}
