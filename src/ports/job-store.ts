/**
 * The job store: a durable record per tracked job (its state, progress and small data) and the
 * counters of fan-outs. Writes are idempotent and ordered: a state change applies only if it is
 * later than what is stored, by (attempt, rank of the state), so a late write from a lost lease or
 * a redelivery never moves a job backwards, and `completed` is final. Counters are per child id, so
 * a child delivered twice is counted once. Implementations must be durable (src/adapters/dynamodb-store.ts):
 * a lost counter would be a completion that never fires.
 */
export type JobState = 'waiting' | 'running' | 'retrying' | 'completed' | 'failed';

/** Order of the states within one attempt. `completed` also wins over `failed` (a replay that succeeded). */
export const STATE_RANK: Readonly<Record<JobState, number>> = { waiting: 0, running: 1, retrying: 2, completed: 3, failed: 3 };

export interface Progress {
  readonly done: number;
  readonly total?: number;
}

export interface FanOutStatus {
  /** How many children the fan-out has; set before the first child is sent. */
  readonly total: number;
  /** Children sent so far (the cursor a resumed fan-out starts from). */
  readonly sent: number;
  readonly succeeded: number;
  readonly failed: number;
  /** The completion job was sent (exactly once, by the child whose end completed the set). */
  readonly completionSent: boolean;
}

/**
 * A job's state as read: a stored JobState, or `waiting-children` for a fan-out parent whose own
 * run completed while some of its children have not ended yet (derived on read, never stored).
 */
export type JobViewState = JobState | 'waiting-children';

/** What the store knows about a job. */
export interface JobStatus {
  readonly jobId: string;
  readonly jobName: string;
  readonly state: JobViewState;
  readonly attempt: number;
  readonly enqueuedAt?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** Who ran the last attempt (the worker's id: host and pid). */
  readonly worker?: string;
  readonly error?: string;
  /** `failed`: why it was dead-lettered (a DeadLetterReason). */
  readonly reason?: string;
  /** `retrying`: when the next attempt is due. */
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
}

/** A progress write (coalesced by the caller): set `done`/`total`, or add to `done`; `data` replaces. */
export interface ProgressUpdate {
  readonly done?: number;
  readonly add?: number;
  readonly total?: number;
  readonly data?: unknown;
}

/** The job sent once every child of a fan-out has ended: its name, queue and extra args. */
export interface CompletionSpec {
  readonly job: string;
  readonly queueUrl: string;
  /** Merged under the counts: the completion job gets `{ ...args, parentId, total, succeeded, failed }`. */
  readonly args?: Record<string, unknown>;
}

/** What counting a child's end answered. */
export type ChildCount =
  /** Counted (or counted before). `completion`: this caller claimed the completion and must send it now. */
  | { readonly kind: 'counted'; readonly status: FanOutStatus; readonly completion: CompletionSpec | undefined }
  /** The set is complete, but another caller's recent claim holds the unsent completion: come back later. */
  | { readonly kind: 'completion-pending'; readonly status: FanOutStatus }
  /** The parent has no fan-out record (expired, or a wrong parent id): there is nothing to count into. */
  | { readonly kind: 'no-fan-out' };

/** One child's terminal outcome, counted once per child id. */
export interface ChildEnd {
  readonly parentId: string;
  readonly childId: string;
  readonly succeeded: boolean;
}

export interface JobStore {
  /** Apply a state change if it is later than the stored one: 'applied', or 'stale' (left as it was). */
  transition(t: Transition): Promise<'applied' | 'stale'>;
  /** Progress and data of a job that has not completed. */
  progress(jobId: string, update: ProgressUpdate): Promise<void>;
  get(jobId: string): Promise<JobStatus | undefined>;
  /** Open a fan-out (idempotent): its total and completion, before any child is sent. Answers what is stored (a resumed fan-out's cursor). */
  openFanOut(parentId: string, jobName: string, total: number, completion: CompletionSpec | undefined): Promise<FanOutStatus>;
  /** Move the cursor of children sent (never backwards). */
  fanOutSent(parentId: string, sent: number): Promise<void>;
  /**
   * Count a child's end once per child id, and when the set is complete claim the completion: free,
   * claimed before with this same `claimToken` (its claimer coming back after a failed send), or
   * claimed longer than `reclaimAfterMs` ago (its claimer died before sending it).
   */
  childEnded(end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount>;
  /** A fan-out of no children: claim its completion at once (the same claim as childEnded's; a retried parent re-claims it after `reclaimAfterMs`). */
  claimEmptyCompletion(parentId: string, claimToken: string, reclaimAfterMs: number): Promise<CompletionSpec | undefined>;
  /** The completion job went out: no child will claim it again. */
  completionSent(parentId: string): Promise<void>;
  close(): void;
}
