import { pino, type Logger } from 'pino';
import type { z } from 'zod';
import type { BatchItem, BatchJobDefinition } from '../core/batch-job.js';
import { newJobId } from '../core/envelope.js';
import { SqsJobsError } from '../core/errors.js';
import { type AnyDefinition, type FanOutOptions, type JobContext, type JobDefinition, validateArgs } from '../core/job.js';
import { checkedArgs } from '../producer/args.js';

/** What a test may set of the context a handler runs with (each has a plain default). */
interface HandlerRunOptions {
  readonly jobId?: string;
  /** 1 unless given: a test of retry logic sets it. */
  readonly attempt?: number;
  readonly tenant?: string;
  /** Abort it to see the handler stop (a worker aborts it at the job's timeout, a lost lease, or shutdown). */
  readonly signal?: AbortSignal;
  /** Default: a silent logger. */
  readonly log?: Logger;
  readonly queueUrl?: string;
  /** The event the run is for (a job defined with `on`): `ctx.event`. */
  readonly event?: { readonly name: string; readonly id: string };
  readonly enqueuedAt?: Date;
}

/** What a handler did in a test run, besides what it returned. */
interface HandlerRun {
  /** What the handler returned. */
  readonly result: unknown;
  /** Progress as the job store would hold it: the last `done`, `total` and `data`, plus every `add`. */
  readonly progress: { readonly done: number | undefined; readonly total: number | undefined; readonly data: unknown };
  /** Each `ctx.fanOut` call: the child job's name and its args, validated as the worker would. */
  readonly fanOuts: { readonly job: string; readonly argsList: readonly unknown[]; readonly options: FanOutOptions | undefined }[];
}

/**
 * Run a job's handler as a worker would, without SQS, memcached or a job store: its args go the
 * way they go in production (checked by the schema as the producer does, as JSON, then parsed by
 * the schema again as the worker does; a ValidationError names the field), its context is built
 * from `options`, and its timeout aborts `ctx.signal`. What the handler throws is thrown (an
 * UnrecoverableError or a RetryLaterError too), and so is the timeout's error when the handler
 * returns after it (the worker counts that run as failed), so a test can expect it.
 */
export async function runHandler<J extends JobDefinition>(
  job: J,
  args: z.input<J['args']>,
  options: HandlerRunOptions = {},
): Promise<HandlerRun> {
  const parsed = asReceived(job, args, 'args');
  const progress = { done: undefined as number | undefined, total: undefined as number | undefined, data: undefined as unknown };
  const fanOuts: { job: string; argsList: readonly unknown[]; options: FanOutOptions | undefined }[] = [];
  const jobId = options.jobId ?? newJobId();
  const { signal, stop, timedOut } = runSignal(options.signal, job.timeoutMs, `job "${job.name}" timed out after ${job.timeoutMs} ms`);
  const ctx: JobContext = {
    jobId,
    jobName: job.name,
    messageId: `test-${jobId}`,
    attempt: options.attempt ?? 1,
    signal,
    log: options.log ?? pino({ level: 'silent' }),
    tenant: options.tenant,
    enqueuedAt: options.enqueuedAt ?? new Date(),
    queueUrl: options.queueUrl ?? 'https://sqs.us-east-1.amazonaws.com/000000000000/test',
    event: options.event,
    progress: Object.assign(
      (done: number, total?: number) => {
        progress.done = Math.max(progress.done ?? 0, done);
        if (total !== undefined) progress.total = total;
      },
      {
        add: (n: number) => {
          progress.done = (progress.done ?? 0) + n;
        },
        data: (value: unknown) => {
          progress.data = value;
        },
      },
    ),
    fanOut: async (child: AnyDefinition, argsList: readonly unknown[], fanOutOptions?: FanOutOptions) => {
      const checked = argsList.map((a, i) => asReceived(child, a, `argsList[${i}]`));
      fanOuts.push({ job: child.name, argsList: checked, options: fanOutOptions });
      return { parentId: jobId, total: checked.length };
    },
  };
  try {
    const result = await job.handle(parsed, ctx);
    if (timedOut()) throw signal.reason;
    return { result, progress, fanOuts };
  } finally {
    stop();
  }
}

/** Args as a handler receives them: checked and sent as the producer does, parsed as the worker does. */
function asReceived(job: AnyDefinition, args: unknown, field: string): unknown {
  return validateArgs(job, JSON.parse(JSON.stringify(checkedArgs(job, args, field))));
}

/**
 * Run a batch job's handler on one batch, as a worker would: each item's args checked by the job's
 * schema, every item sharing the first one's key. Answers the failed items the handler reported,
 * by job id; what the handler throws is thrown.
 */
export async function runBatchHandler<J extends BatchJobDefinition>(
  job: J,
  argsList: readonly z.input<J['args']>[],
  options: Omit<HandlerRunOptions, 'jobId'> = {},
): Promise<{ readonly items: readonly BatchItem<z.output<J['args']>>[]; readonly failed: ReadonlyMap<string, unknown> }> {
  const items = argsList.map((args) => {
    const jobId = newJobId();
    return {
      jobId,
      args: asReceived(job, args, 'args') as z.output<J['args']>,
      attempt: options.attempt ?? 1,
      messageId: `test-${jobId}`,
      tenant: options.tenant,
      enqueuedAt: options.enqueuedAt ?? new Date(),
    };
  });
  if (items.length === 0) throw new SqsJobsError('ARGS_INVALID', 'runBatchHandler needs at least one item');
  const keys = new Set(items.map((i) => String(job.key(i.args))));
  if (keys.size > 1)
    throw new SqsJobsError('ARGS_INVALID', `a batch holds one key; these items have ${keys.size}: ${[...keys].join(', ')}`);
  const { signal, stop, timedOut } = runSignal(
    options.signal,
    job.timeoutMs,
    `batch job "${job.name}" timed out after ${job.timeoutMs} ms`,
  );
  try {
    const answer = await job.handle(items, {
      jobName: job.name,
      key: [...keys][0]!,
      signal,
      log: options.log ?? pino({ level: 'silent' }),
    });
    if (timedOut()) throw signal.reason;
    return { items, failed: new Map((answer?.failed ?? []).map((f) => [f.jobId, f.error])) };
  } finally {
    stop();
  }
}

/** The handler's signal: the test's own, and the job's timeout. */
function runSignal(
  given: AbortSignal | undefined,
  timeoutMs: number | undefined,
  message: string,
): { signal: AbortSignal; stop: () => void; timedOut: () => boolean } {
  const timeout = new AbortController();
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => timeout.abort(new SqsJobsError('JOB_TIMEOUT', message)), timeoutMs);
  return {
    signal: given === undefined ? timeout.signal : AbortSignal.any([given, timeout.signal]),
    stop: () => clearTimeout(timer),
    timedOut: () => timeout.signal.aborted,
  };
}
