import type { Logger } from 'pino';
import type { AnyDefinition, FanOutOptions, JobArgs, JobContext, ProgressFn } from '../../core/job.js';
import type { JobInfo } from '../../core/job-events.js';
import { SqsJobsError } from '../../core/errors.js';
import { originOf } from '../../core/delivery.js';
import { fanOut } from '../../fan-out/fan-out.js';
import type { RunNeeds } from '../context.js';
import type { Lease } from '../hold/lease.js';
import { jobLogger } from './job-logger.js';
import { NO_PROGRESS } from '../../status/progress.js';

/**
 * The `ctx` a handler is given. A class, so every job's ctx has one shape, and what most handlers
 * never ask for is made only when asked: the signal (an AbortController), the logger (a pino
 * child), the enqueue time as a Date, `fanOut`, a tracked job's progress reporter. Those five are
 * getters: destructuring reads them, a spread (`{ ...ctx }`) does not copy them.
 */
export class RunContext implements JobContext {
  readonly jobId: string;
  readonly jobName: string;
  readonly messageId: string;
  readonly attempt: number;
  readonly tenant: string | undefined;
  readonly queueUrl: string;
  readonly event: { readonly name: string; readonly id: string } | undefined;
  readonly #ctx: RunNeeds;
  readonly #lease: Lease;
  readonly #info: JobInfo;
  readonly #enqueuedAt: string;
  #log: Logger | undefined;
  #enqueuedDate: Date | undefined;
  #signal: AbortSignal | undefined;
  #progress: ProgressFn | undefined;

  constructor(
    ctx: RunNeeds,
    lease: Lease,
    info: JobInfo,
    envelope: { readonly id: string; readonly enqueuedAt: string; readonly tenant?: string; readonly event?: JobContext['event'] },
  ) {
    this.#ctx = ctx;
    this.#lease = lease;
    this.#info = info;
    this.#enqueuedAt = envelope.enqueuedAt;
    this.jobId = envelope.id;
    this.jobName = info.jobName;
    this.messageId = lease.message.messageId;
    this.attempt = info.attempt;
    this.tenant = envelope.tenant;
    this.queueUrl = lease.message.queueUrl;
    this.event = envelope.event;
  }

  /**
   * A tracked job's reporter is made when first read, and kept by this ctx; the lease keeps it too
   * while this is its current run, for settle's last flush (a FIFO job retried here runs again
   * under another ctx: a late call from this one must not become that run's reporter). Untracked
   * jobs report nowhere.
   */
  get progress(): ProgressFn {
    if (this.#progress !== undefined) return this.#progress;
    const status = this.#ctx.status;
    const tracking = this.#lease.tracking;
    if (status === undefined || tracking?.tracked !== true) {
      this.#progress = NO_PROGRESS;
      return NO_PROGRESS;
    }
    const reporter = status.tracker.progress(this.#info, tracking);
    if (this.#lease.info === this.#info) this.#lease.progress = reporter;
    this.#progress = reporter.fn;
    return reporter.fn;
  }

  /** This run's signal (a FIFO job retried here runs again under a new one: work this run left behind keeps this one). */
  get signal(): AbortSignal {
    this.#signal ??= this.#lease.signal;
    return this.#signal;
  }

  get log(): Logger {
    this.#log ??= jobLogger(this.#ctx.report.log, this.#info);
    return this.#log;
  }

  get enqueuedAt(): Date {
    this.#enqueuedDate ??= new Date(this.#enqueuedAt);
    return this.#enqueuedDate;
  }

  /** A getter, so `const { fanOut } = ctx` works too; the function is made when first read. */
  get fanOut(): JobContext['fanOut'] {
    this.#fanOut ??= (child, argsList, options) => this.#fanOutNow(child, argsList, options);
    return this.#fanOut;
  }

  #fanOut: JobContext['fanOut'] | undefined;

  #fanOutNow<C extends AnyDefinition>(
    child: C,
    argsList: readonly JobArgs<C>[],
    options?: FanOutOptions,
  ): Promise<{ parentId: string; total: number }> {
    const status = this.#ctx.status;
    if (status === undefined) {
      return Promise.reject(
        new SqsJobsError('CONFIG_INVALID', 'ctx.fanOut needs a job store: set the worker option store ({ table }) or SQS_JOBS_JOB_TABLE'),
      );
    }
    const m = this.#lease.message;
    const parent = { jobId: this.jobId, jobName: this.jobName, queueUrl: m.queueUrl, originId: originOf(m), signal: this.signal };
    return fanOut(status.fanOut, parent, child, argsList, options);
  }
}
