import type { Env } from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import type { WorkerOptions } from '../worker/options.js';

/** Worker options that mean nothing on Lambda: its event source mapping receives, and an invocation holds nothing past its records. */
const NOT_ON_LAMBDA = {
  prefetch: 'the event source mapping receives (set its batch size)',
  receiveConcurrency: 'the event source mapping receives (set its maximum concurrency)',
  waitTimeSeconds: 'the event source mapping receives',
  heartbeatIntervalMs: 'an invocation ends before its records become visible: set the function timeout under the visibility timeout',
  shutdownTimeoutMs: 'an invocation ends at its deadline (deadlineMarginMs)',
  handleSignals: 'Lambda sends no signals to a handler',
  tiers: 'give each lane its own mapping',
  schedules: 'schedule ticks need a process that keeps running: run them in a worker',
} as const;

/** `createLambdaHandler`'s options: the worker's that apply, and when the deadline comes. */
export type LambdaHandlerOptions = Omit<WorkerOptions, keyof typeof NOT_ON_LAMBDA> & {
  /**
   * How long before the function's timeout handlers' signals fire (reason `DEADLINE`), in ms: what
   * is not done is re-sent, its receive not counted. More than abortGraceMs, which a handler is
   * given to stop. Default 2000.
   */
  readonly deadlineMarginMs?: number;
};

/** The worker options a Lambda handler runs on; refuses those that do not apply, with the reason. */
export function lambdaWorkerOptions(options: LambdaHandlerOptions, env: Env): { worker: WorkerOptions; deadlineMarginMs: number } {
  if (typeof options !== 'object' || options === null) throw new ConfigError('invalid Lambda handler options: must be an object');
  for (const [key, why] of Object.entries(NOT_ON_LAMBDA))
    if (key in options && (options as Record<string, unknown>)[key] !== undefined)
      throw new ConfigError(`invalid Lambda handler options: options.${key}: not on Lambda: ${why}`);
  const { deadlineMarginMs = 2_000, ...rest } = options;
  const grace = rest.abortGraceMs ?? 1_000;
  if (!Number.isSafeInteger(deadlineMarginMs) || deadlineMarginMs <= grace)
    throw new ConfigError(
      `invalid Lambda handler options: options.deadlineMarginMs: must be a whole number of ms above abortGraceMs (${grace})`,
    );
  const visibility = rest.visibilityTimeoutSeconds ?? visibilityFrom(env);
  // The queues it is mapped to: the option, else SQS_JOBS_QUEUE_URLS (the construct's list), else SQS_JOBS_QUEUE_URL.
  const listed = env.SQS_JOBS_QUEUE_URLS?.split(',').filter((url) => url !== '');
  return {
    worker: {
      deleteFlushMs: 10,
      ...rest,
      ...(rest.queues === undefined && listed !== undefined && listed.length > 0 ? { queues: listed } : {}),
      ...(visibility === undefined ? {} : { visibilityTimeoutSeconds: visibility }),
      handleSignals: false,
      prefetch: 0,
      // EMF unless told otherwise: metrics go to stdout, and CloudWatch Logs makes them metrics (no call in the invocation).
      metrics: { ...rest.metrics, sink: rest.metrics?.sink ?? (env.SQS_JOBS_METRICS ? undefined : 'emf') },
    },
    deadlineMarginMs,
  };
}

/** SQS_JOBS_VISIBILITY_TIMEOUT, the queue's visibility timeout in seconds (the construct sets it): the lock lives that long and 5 s more. */
function visibilityFrom(env: Env): number | undefined {
  const text = env.SQS_JOBS_VISIBILITY_TIMEOUT;
  if (text === undefined || text === '') return undefined;
  const seconds = Number(text);
  if (!Number.isSafeInteger(seconds) || seconds < 2)
    throw new ConfigError(`invalid SQS_JOBS_VISIBILITY_TIMEOUT: must be a whole number of seconds, at least 2; got "${text}"`);
  return seconds;
}
