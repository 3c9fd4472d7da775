import type { PauseMark, PauseScope } from '../core/pause.js';

/**
 * The control state, kept in the job store: the pauses in force. It is durable (a memcached
 * restart or a worker restart forgets nothing); memcached only tells the fleet that it changed
 * (ports/control-notices.ts), so that workers read it again within a second instead of every
 * second. `version` grows with every change.
 */
export interface ControlStore {
  /** Every pause kept (timed ones that ran out too, until resumed or replaced), and the version they are at. */
  readPauses(): Promise<{ readonly version: number; readonly marks: readonly PauseMark[] }>;
  /** Keep `mark`, over any pause of the same scope. Answers the version after the change. */
  putPause(mark: PauseMark): Promise<number>;
  /** Forget the pause of `scope`: `removed` false when there was none. Answers the version after. */
  removePause(scope: PauseScope): Promise<{ readonly removed: boolean; readonly version: number }>;
}

/**
 * How the fleet hears of a change to the control state: a version beside the lock (memcached),
 * asked each second by every worker, cheaper than reading the store.
 */
export interface ControlNotices {
  /** The version last told; undefined when none is kept (never told, or memcached restarted); 'unavailable' when it cannot be asked. */
  seen(): Promise<string | undefined | 'unavailable'>;
  /** Tell the fleet the state is at `version`. Never rejects: false when it could not. */
  tell(version: string): Promise<boolean>;
  /** Tell `version` only when none is kept (a worker that read the store after a restart). Never rejects. */
  tellIfNone(version: string): Promise<boolean>;
}
