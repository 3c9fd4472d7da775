/*
 * Whether a job still waits or runs, by its record in the job store and the dedupe lock: the one
 * rule behind a schedule's overlap (schedules/tick.ts) and a singleton key (producer/keyed.ts).
 */

export interface BusyPorts {
  /** A job's state in the job store; undefined when it has no record. */
  stateOf(jobId: string): Promise<{ readonly state: string; readonly updatedAtS: number } | undefined>;
  /** Whether a run holds the job id in the dedupe lock now (its heartbeat keeps it); false when none does or the lock cannot tell. */
  held(jobId: string): Promise<boolean>;
  /** A job recorded `running` longer ago than this, that no run holds in the lock, is taken for dead (its worker died). */
  readonly staleRunningS: number;
}

/** The states of a job not yet started: kept until its time, sent, or waiting for its next attempt. */
const WAITING: ReadonlySet<string> = new Set(['scheduled', 'waiting', 'retrying']);

/** A job's state as BusyPorts.stateOf reads it. */
export type BusyState = Awaited<ReturnType<BusyPorts['stateOf']>>;

/**
 * `waiting` (kept, sent or retrying), `running` (a run the lock shows held, however long; or one
 * recorded running within staleRunningS), or undefined: ended, never recorded, or its worker died.
 * `status`: the job's state, read once by the caller (stateOf).
 */
export async function busyOf(
  p: Pick<BusyPorts, 'held' | 'staleRunningS'>,
  jobId: string,
  status: BusyState,
  nowS: number,
): Promise<'waiting' | 'running' | undefined> {
  if (status === undefined) return undefined;
  if (WAITING.has(status.state)) return 'waiting';
  if (status.state !== 'running') return undefined;
  return nowS - status.updatedAtS < p.staleRunningS || (await p.held(jobId)) ? 'running' : undefined;
}
