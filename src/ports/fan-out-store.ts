import type { TraceContext } from '../core/trace-context.js';
/**
 * The fan-out store: the counters of a fan-out, kept on its parent's record. Counters are per
 * child id, so a child delivered twice is counted once, and the completion is claimed by one
 * caller at a time. Implementations must be durable (src/adapters/dynamodb-store.ts): a lost
 * counter would be a completion that never fires.
 */
export interface FanOutStatus {
  /** How many children the fan-out has; set before the first child is sent. */
  readonly total: number;
  /** Children sent so far (the cursor a resumed fan-out starts from). */
  readonly sent: number;
  readonly succeeded: number;
  readonly failed: number;
  /** The completion job was sent (exactly once, by the child that claimed it once the set was complete). */
  readonly completionSent: boolean;
}

/** The job sent once every child of a fan-out has ended: its name, queue and extra args. */
export interface CompletionSpec {
  readonly job: string;
  readonly queueUrl: string;
  /** Merged under the counts: the completion job gets `{ ...args, parentId, total, succeeded, failed }`. */
  readonly args?: Record<string, unknown>;
  /** The trace the parent's run was in (its span, when it opened the fan-out): the completion is sent in it. */
  readonly trace?: TraceContext;
}

/** What counting a child's end answered. */
export type ChildCount =
  /**
   * Counted (or counted before). `completion`: this caller claimed the completion and must send it
   * now. `status`: the counters after the count; a store may leave it out when the count left the
   * set incomplete (it did not read them).
   */
  | { readonly kind: 'counted'; readonly status: FanOutStatus | undefined; readonly completion: undefined }
  | { readonly kind: 'counted'; readonly status: FanOutStatus; readonly completion: CompletionSpec }
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

/**
 * The fan-out store port, part of JobStore: a fan-out's counters and its completion claim, on the
 * parent's record. Must be durable: a lost count is a completion that never fires.
 */
export interface FanOutStore {
  /**
   * Open a fan-out (idempotent): its total and completion, before any child is sent. Answers what
   * is stored (a resumed fan-out's cursor); refuses (throws) a total other than the stored one.
   */
  openFanOut(parentId: string, jobName: string, total: number, completion: CompletionSpec | undefined): Promise<FanOutStatus>;
  /** Move the cursor of children sent (never backwards). */
  fanOutSent(parentId: string, sent: number): Promise<void>;
  /**
   * Count a child's end once per child id, and when the set is complete claim the completion: free,
   * claimed before with this same `claimToken` (its claimer coming back after a failed send), or
   * claimed longer than `reclaimAfterMs` ago (its claimer died before sending it).
   */
  childEnded(end: ChildEnd, claimToken: string, reclaimAfterMs: number): Promise<ChildCount>;
  /** A fan-out of no children: claim its completion at once (the same claim as childEnded's). Undefined: not claimed. */
  claimEmptyCompletion(parentId: string, claimToken: string, reclaimAfterMs: number): Promise<CompletionSpec | undefined>;
  /** The completion job went out: no child will claim it again. */
  completionSent(parentId: string): Promise<void>;
  /** Free what the store holds (a client it made). sqs-jobs closes only stores it made; one passed as `store` is yours to close. */
  close(): void;
}
