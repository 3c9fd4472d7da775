import { hostname } from 'node:os';
import { createHash } from 'node:crypto';
import { ConfigError, type ErrorCode, SqsJobsError } from '../core/errors.js';
import type { JobStore } from '../ports/job-store.js';
import type { QueuePort } from '../ports/queue.js';
import type { TickRota } from '../ports/tick-rota.js';
import type { Producer } from '../producer/producer.js';
import { runTicker } from '../schedules/ticker.js';
import type { WorkerContext } from './context.js';

/** A job left `running` by a dead worker blocks its schedule's next occurrence this long past the visibility timeout at most. */
const STALE_MARGIN_S = 60;

/** What enqueue refuses for good: an occurrence refused so is skipped, not tried again. */
const NEVER_SENDABLE: ReadonlySet<ErrorCode> = new Set(['ARGS_INVALID', 'OPTIONS_INVALID', 'PAYLOAD_TOO_LARGE', 'JOB_UNKNOWN']);

/** The worker's schedule ticks (option `schedules`): started with the worker, ended by its stop signal. */
export interface ScheduleTicks {
  start(): void;
  /** Settles once the stop signal has ended the ticks and the last has made its sends (or left them due). */
  ended(): Promise<void>;
}

/**
 * Tick the schedules in the job store for the jobs this worker has, sending each occurrence's job
 * with its deterministic id through the worker's producers (tracked, so the overlap rule reads its
 * status). Throws ConfigError when there is no job store, or it keeps no schedules.
 */
export function scheduleTicks(
  ctx: Pick<WorkerContext, 'config' | 'report' | 'stop' | 'lock'>,
  status:
    | {
        readonly store: JobStore;
        readonly producer: (queueUrl: string) => Producer;
        /** The worker's queue port, for the messages of kept jobs (sent as made). */
        readonly queue: Pick<QueuePort, 'send'>;
      }
    | undefined,
  rota: TickRota,
): ScheduleTicks {
  if (status === undefined)
    throw new ConfigError(
      'invalid worker options: options.schedules: schedules are kept in the job store: set options.store or SQS_JOBS_JOB_TABLE',
    );
  const { store, producer, queue } = status;
  const schedules = store.schedules;
  if (schedules === undefined)
    throw new ConfigError('invalid worker options: options.schedules: this job store keeps no schedules (it has no `schedules` member)');
  const c = ctx.config;
  const log = ctx.report.log;
  let running: Promise<void> | undefined;
  const ticks = () =>
    runTicker({
      store: schedules,
      rota,
      me: `${hostname()}:${process.pid}`,
      signal: ctx.stop.signal,
      staleRunningS: c.visibilityTimeoutSeconds + STALE_MARGIN_S,
      now: () => Math.floor(Date.now() / 1000),
      nowMs: () => Date.now(),
      jobs: createHash('sha256').update(c.jobs.names().sort().join('\n')).digest('base64url').slice(0, 12),
      has: (job) => c.jobs.find(job) !== undefined,
      send: async (o) => {
        try {
          await producer(o.queueUrl).enqueue(o.job, o.args as never, { jobId: o.jobId, track: true });
          return undefined;
        } catch (error) {
          // What no later send can mend (args the job's schema refuses now): skipped, said.
          if (error instanceof SqsJobsError && NEVER_SENDABLE.has(error.code)) return { refused: error.message };
          throw error;
        }
      },
      stateOf: async (jobId) => {
        const s = await store.get(jobId);
        return s === undefined ? undefined : { state: s.state, updatedAtS: Date.parse(s.updatedAt) / 1000 };
      },
      held: async (jobId) => (await ctx.lock.holder?.(jobId)) !== undefined,
      onProblem: (schedule, problem) => log.warn({ schedule, problem }, 'a schedule was not fired'),
      onFired: (o) =>
        ctx.report.emit('schedule:fired', {
          schedule: o.schedule,
          jobName: o.job,
          jobId: o.jobId,
          queueUrl: o.queueUrl,
          occurrence: new Date(o.occurrence * 1000),
          lateMs: Date.now() - o.occurrence * 1000,
        }),
      onSkipped: (o) => ctx.report.emit('schedule:skipped', { schedule: o.schedule, jobName: o.job, queueUrl: o.queueUrl, count: o.count }),
      onTick: (shard, r) => log.debug({ shard, fired: r.fired, skipped: r.skipped }, 'schedules ticked'),
      timed: store.timed,
      sendMessage: async (queueUrl, message) => void (await queue.send(queueUrl, message)),
      onUnsent: (jobId, problem) => log.warn({ jobId, problem }, 'a job kept until its time was not sent yet'),
      onTimedSent: (shard, sent) => log.debug({ shard, sent }, 'jobs kept until their time sent'),
      onError: (error) => ctx.report.onError('schedule tick', error),
    });
  return {
    start: () => {
      running ??= ticks();
    },
    ended: async () => {
      await running;
    },
  };
}
