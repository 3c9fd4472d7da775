import type { FanOutStatus } from './fan-out-store.js';

/**
 * The status store: a durable record per tracked job (its state, progress and small data). Writes
 * are idempotent and ordered: a state change applies only if it is later than what is stored, by
 * (attempt, rank of the state), so a late write from a lost lease or a redelivery never moves a
 * job backwards, and `completed` is final (it also wins over `failed`: a replay that succeeded).
 */
export type JobState = 'scheduled' | 'waiting' | 'running' | 'retrying' | 'completed' | 'failed' | 'cancelled';

/** Order of the states within one attempt (`scheduled`: kept in the job store until its time, before it is sent). */
export const STATE_RANK: Readonly<Record<JobState, number>> = {
  scheduled: -1,
  waiting: 0,
  running: 1,
  retrying: 2,
  completed: 3,
  failed: 3,
  cancelled: 3,
};

/** The states a job ends in: `completed` is final; `failed` and `cancelled` give way only to a later attempt, or to `completed`. */
export const ENDED_STATES: ReadonlySet<JobState> = new Set(['completed', 'failed', 'cancelled']);

/** Results and data are kept only when their JSON is this small (a DynamoDB item holds 400 KB). */
export const MAX_JSON_BYTES = 4_096;

/** Error texts are kept to this many characters. */
export const MAX_ERROR_CHARS = 1_000;

/** A job's progress: `done` of `total` units of work (`total` unset: not known). A fan-out parent with none shows its children's, ended of total. */
export interface Progress {
  readonly done: number;
  readonly total?: number;
}

/**
 * A job's state as read: a stored JobState, or `waiting-children` for a fan-out parent whose own
 * run completed while some of its children have not ended yet (derived on read, never stored).
 */
type JobViewState = JobState | 'waiting-children';

/** What the store knows about a job. */
export interface JobStatus {
  readonly jobId: string;
  readonly jobName: string;
  readonly state: JobViewState;
  readonly attempt: number;
  /** The tenant it was enqueued for, when its record has one (kept from the first state change that gave it). */
  readonly tenant?: string;
  readonly enqueuedAt?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Who ran the last attempt (the worker's id: host and pid). */
  readonly worker?: string;
  readonly error?: string;
  /** `failed`: why it was dead-lettered (a DeadLetterReason); `cancelled`: how it was cancelled. */
  readonly reason?: string;
  /** `retrying`: when the next attempt is due; `scheduled`: when the job is to run. */
  readonly nextAttemptAt?: string;
  /** `completed`: what the handler returned, as JSON, when it was small. */
  readonly result?: unknown;
  readonly progress?: Progress;
  /** A small JSON value the handler set (ctx.progress.data). */
  readonly data?: unknown;
  /** The fan-out this job is a child of. */
  readonly parentId?: string;
  readonly fanOut?: FanOutStatus;
  readonly updatedAt: string;
}

/** A state change, as the worker or producer asks for it. */
export interface Transition {
  readonly jobId: string;
  readonly jobName: string;
  readonly state: JobState;
  readonly attempt: number;
  readonly at: Date;
  readonly enqueuedAt?: string;
  readonly worker?: string;
  /** When the attempt started (written with `running`, or with the end of a run too short to have recorded `running`). */
  readonly startedAt?: Date;
  readonly error?: string;
  readonly reason?: string;
  readonly nextAttemptAt?: Date;
  readonly result?: unknown;
  readonly parentId?: string;
  /**
   * The job's tenant (its envelope's): kept on the record, and what the jobs list's tenant filter
   * matches. A change made without it leaves the record out of lists by tenant until one with it.
   */
  readonly tenant?: string;
}

/** A progress write (coalesced by the caller): set `done`/`total`, or add to `done`; `data` replaces. */
export interface ProgressUpdate {
  readonly done?: number;
  readonly add?: number;
  readonly total?: number;
  readonly data?: unknown;
}

/**
 * The status store port, part of JobStore: one durable record per tracked job, which workers and
 * producers write and getJob() reads. Writes are idempotent and ordered (see JobState and isLater).
 */
export interface StatusStore {
  /** Apply a state change if it is later than the stored one: 'applied', or 'stale' (left as it was). */
  transition(t: Transition): Promise<'applied' | 'stale'>;
  /** Progress and data of a job that is recorded and has not completed; `done` never goes down. */
  progress(jobId: string, update: ProgressUpdate): Promise<void>;
  /** The job's status, read consistently; a fan-out parent's state and progress follow its children (see viewOf). */
  get(jobId: string): Promise<JobStatus | undefined>;
  /** Free what the store holds (a client it made). sqs-jobs closes only stores it made; one passed as `store` is yours to close. */
  close(): void;
}

/** Whether a stored state change `t` wins over the stored (state, attempt): the store's one ordering rule. */
export function isLater(t: Pick<Transition, 'state' | 'attempt'>, stored: { state: JobState; attempt: number } | undefined): boolean {
  if (stored === undefined) return true;
  if (stored.state === 'completed') return false;
  if (t.state === 'completed') return true;
  return stored.attempt < t.attempt || (stored.attempt === t.attempt && STATE_RANK[stored.state] < STATE_RANK[t.state]);
}

/**
 * What a read shows of a job's own state and progress once its fan-out is known: a fan-out parent
 * (tracked or not) whose own run completed, or that never recorded a state of its own, waits for
 * its children, then reads completed once they have all ended; with no progress of its own it
 * shows its children's (ended of total). A `scheduled` job whose time (`runAt`) has come reads
 * `waiting`: it is in its queue, or about to be.
 */
export function viewOf(
  state: JobState | undefined,
  progress: Progress | undefined,
  fanOut: FanOutStatus | undefined,
  runAt?: string,
): { state: JobViewState; progress: Progress | undefined } {
  if (state === 'scheduled' && runAt !== undefined && Date.parse(runAt) <= Date.now()) return viewOf('waiting', progress, fanOut);
  if (fanOut === undefined) return { state: state ?? 'running', progress };
  const ended = fanOut.succeeded + fanOut.failed;
  const own = state === 'completed' || state === undefined ? (ended >= fanOut.total ? 'completed' : 'waiting-children') : state;
  return { state: own, progress: progress ?? { done: ended, total: fanOut.total } };
}

/** Small JSON, or undefined when it is too big (or not JSON): what a store keeps of a result or data. */
export function smallJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text !== undefined && Buffer.byteLength(text) <= MAX_JSON_BYTES ? text : undefined;
  } catch {
    return undefined;
  }
}
