import { pino } from 'pino';
import { encodeEnvelope, newJobId } from '../../src/core/envelope.js';
import { SafeEmitter } from '../../src/core/events.js';
import type { AnyDefinition } from '../../src/core/job.js';
import type { WorkerEvents } from '../../src/core/job-events.js';
import type { WorkerContext } from '../../src/worker/context.js';
import type { Lease } from '../../src/worker/hold/lease.js';
import { resolveWorkerConfig } from '../../src/worker/config.js';
import type { WorkerOptions } from '../../src/worker/options.js';
import { queueState } from '../../src/worker/queue-state.js';
import { buildContext } from '../../src/worker/wiring.js';
import { MemoryLock } from '../../src/testing/memory-lock.js';
import { MemoryPermits } from '../../src/testing/memory-permits.js';
import { MemoryQueue } from '../../src/testing/memory-queue.js';
import type { JobInfo } from '../../src/core/job-events.js';
import type { Outcome } from '../../src/worker/decide/decide.js';
import type { Reading } from '../../src/worker/reading.js';
import { Activity } from '../../src/worker/activity.js';
import { Delivery } from '../../src/worker/delivery.js';
import type { Acts } from '../../src/worker/fate/acts.js';
import { Fate } from '../../src/worker/fate/conclude.js';
import type { Scheduler } from '../../src/worker/intake/scheduler.js';
import type { QueueState } from '../../src/worker/queue-state.js';
import { WaitingRoom } from '../../src/worker/turns/room.js';
import { noRoom, type Room } from '../../src/worker/turns/turn.js';

/** The events a test of one phase records, in order. */
const RECORDED = [
  'job:start',
  'job:succeeded',
  'job:duplicate',
  'job:failed',
  'job:handed-back',
  'job:resent',
  'job:deferred',
  'job:dead-lettered',
  'job:lock-unavailable',
  'job:waiting',
] as const;

/** A worker's context on the in-memory queue, lock and permits: for unit tests of one phase. */
export interface InMemoryWorker {
  readonly ctx: WorkerContext;
  /** What settle may do to a held message (the fate's alone in a worker). */
  readonly acts: Acts;
  readonly memory: MemoryQueue;
  readonly lock: MemoryLock;
  readonly permits: MemoryPermits;
  readonly url: string;
  readonly dlq: string;
  /** The events emitted so far, by name. */
  readonly events: string[];
  /** Where the worker reported errors so far (ctx.report.onError's `where`). */
  readonly errors: string[];
  /** Send a job's envelope to the queue (`groupId`: a FIFO queue's message group); answers its job id. */
  send(job: string, args: unknown, o?: { readonly id?: string; readonly tenant?: string; readonly groupId?: string }): Promise<string>;
  /** Receive the next visible message, held under the heartbeat as the poller would. */
  receive(): Promise<Lease>;
  /** Stop the heartbeat (call after each test). */
  close(): Promise<void>;
}

export async function inMemoryWorker(
  jobs: readonly AnyDefinition[],
  o: { readonly maxReceiveCount?: number; readonly options?: Partial<WorkerOptions>; readonly queueName?: string } = {},
): Promise<InMemoryWorker> {
  const memory = new MemoryQueue();
  const dlq = memory.create('jobs-dlq');
  const maxReceiveCount = o.maxReceiveCount ?? 3;
  const url = memory.create(o.queueName ?? 'jobs', { deadLetterQueueUrl: dlq, maxReceiveCount });
  const lock = new MemoryLock();
  const permits = new MemoryPermits();
  const log = pino({ level: 'silent' });
  const c = resolveWorkerConfig(
    {
      queues: [url],
      jobs: [...jobs],
      queue: memory,
      lock,
      permits,
      deleteFlushMs: 0,
      handleSignals: false,
      logger: log,
      metrics: { sink: 'off' },
      ...o.options,
    },
    {},
  );
  const queues = c.queues.map(queueState);
  queues[0]!.deadLetterQueueUrl = dlq;
  queues[0]!.maxReceiveCount = maxReceiveCount;
  const events: string[] = [];
  const emitter = new SafeEmitter<WorkerEvents>(() => {});
  for (const e of RECORDED) emitter.on(e, () => events.push(e));
  const errors: string[] = [];
  const { ctx, acts } = buildContext(c, {}, log, emitter, queues, (where) => errors.push(where));
  return {
    ctx,
    acts,
    memory,
    lock,
    permits,
    url,
    dlq,
    events,
    errors,
    async send(job, args, s = {}) {
      const id = s.id ?? newJobId();
      const envelope = {
        v: 1 as const,
        id,
        job,
        args,
        enqueuedAt: new Date().toISOString(),
        ...(s.tenant === undefined ? {} : { tenant: s.tenant }),
      };
      await memory.send(url, {
        body: encodeEnvelope(envelope),
        attributes: {},
        ...(s.groupId === undefined ? {} : { groupId: s.groupId }),
      });
      return id;
    },
    async receive() {
      const [m] = await memory.receive(url, 1, 0, c.visibilityTimeoutSeconds);
      if (m === undefined) throw new Error('no message to receive');
      return ctx.heartbeat.hold(m);
    },
    close: () => ctx.heartbeat.close(),
  };
}

/** A delivery of `lease` until its outcome is known (what it concluded, in place of settling it), or its walk's error. */
export function runToEnd(ctx: WorkerContext, lease: Lease, read: Reading, room?: Room): Promise<{ info: JobInfo; outcome: Outcome }> {
  return new Promise((resolve, reject) => {
    Delivery.start(
      {
        ctx: { ...ctx, report: { ...ctx.report, onError: (_where, error) => reject(error) } },
        room: room ?? noRoom(),
        activity: new Activity(1, (_where, error) => reject(error)),
        fate: {
          conclude: (_lease, info, outcome) => resolve({ info, outcome }),
          handBackWaiting: () => Promise.reject(new Error('a delivery in a test handed back a waiting message')),
        },
        dispatch: () => {},
      },
      lease,
      read,
    );
  });
}

/** A worker's fate and waiting room over `scheduler` and `activity`, as the worker wires them (`wake`: its dispatch). */
export function fateOf(
  ctx: WorkerContext,
  acts: Acts,
  scheduler: Scheduler<QueueState>,
  activity: Activity,
  wake: () => void,
): { fate: Fate; room: WaitingRoom } {
  const room: WaitingRoom = new WaitingRoom(
    { ctx, scheduler, activity, wake, handBackWaiting: (lease, reason) => fate.handBackWaiting(lease, reason) },
    ctx.config.concurrency + ctx.config.prefetch,
  );
  const fate = new Fate(ctx, acts, scheduler, activity, room, wake);
  return { fate, room };
}
