import { PauseBoard } from '../core/pause.js';
import { within } from '../core/sleep.js';
import type { ControlNotices, ControlStore } from '../ports/control-store.js';

/** How often a worker asks whether the pauses changed: a resume reaches it within about this long. */
export const PAUSE_POLL_MS = 1_000;
/** How often it reads the store anyway (a change whose notice was lost: memcached was down for the writer). */
export const PAUSE_REREAD_MS = 30_000;
/** The longest a round waits for memcached or the store: a slow one is given up and asked again next round. */
const CALL_TIMEOUT_MS = 3_000;

/** What the watch calls on a change: the board before and after (a timed pause's end is one too). */
export type PauseListener = (now: PauseBoard, before: PauseBoard) => void;

/**
 * A process's view of the pauses in force (a worker's, a producer's), kept current by one cheap
 * question a second: the version memcached holds (ControlNotices). The store is read when that
 * version is newer than the one read last, when memcached has none (it restarted: the reader tells
 * it the version it read) or cannot be asked (then each second), and every PAUSE_REREAD_MS
 * besides; one it holds that is older (a writer's notice lost or overtaken) is put right with the
 * version read, so the fleet stops asking. Each call is given up after CALL_TIMEOUT_MS. A store
 * that cannot be read keeps the last board: a pause seen stays in force, none seen stays none. A
 * timed pause's end is told on its own timer, whatever memcached or the store do.
 */
export class PauseWatch {
  readonly #store: ControlStore;
  readonly #notices: ControlNotices | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #listeners: PauseListener[] = [];
  #board = new PauseBoard([]);
  #version = -1;
  #readAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Set for the board's next timed end. */
  #endTimer: NodeJS.Timeout | undefined;
  #busy = false;
  #closed = false;

  constructor(store: ControlStore, notices: ControlNotices | undefined, onError: (error: unknown) => void) {
    this.#store = store;
    this.#notices = notices;
    this.#onError = onError;
  }

  /** The pauses as last read. */
  get board(): PauseBoard {
    return this.#board;
  }

  /** Hear of each change from now on. */
  listen(listener: PauseListener): void {
    this.#listeners.push(listener);
  }

  /** Read the store once (a failure is reported, and the board stays empty), then keep watching. */
  async start(): Promise<void> {
    await this.#read();
    if (this.#closed || this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.check(), PAUSE_POLL_MS);
    this.#timer.unref();
  }

  /** One round of the watch: ask, read when needed, tell the listeners. Exposed for tests; start() runs it each second. */
  async check(now = Date.now()): Promise<void> {
    if (this.#busy || this.#closed) return;
    this.#busy = true;
    try {
      const seen =
        this.#notices === undefined ? 'unavailable' : await within(this.#notices.seen(), CALL_TIMEOUT_MS, 'unavailable' as const);
      const told = seen === 'unavailable' || seen === undefined ? undefined : Number(seen);
      const newer = told === undefined || !Number.isSafeInteger(told) || told > this.#version;
      if (newer || now - this.#readAt >= PAUSE_REREAD_MS) {
        const read = await this.#read();
        // memcached forgot the version (it restarted): put back the one just read, so the rest of the fleet asks once.
        if (seen === undefined && read) await within(this.#notices!.tellIfNone(String(this.#version)), CALL_TIMEOUT_MS, false);
      }
      // An older version than the store's (a notice lost, or two told out of order): put right, or every worker reads each second.
      if (told !== undefined && Number.isSafeInteger(told) && told < this.#version)
        await within(this.#notices!.tell(String(this.#version)), CALL_TIMEOUT_MS, false);
    } finally {
      this.#busy = false;
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#endTimer !== undefined) clearTimeout(this.#endTimer);
  }

  /** Read the store: false when it could not be read (or took too long). */
  async #read(): Promise<boolean> {
    try {
      const read = await within(this.#store.readPauses(), CALL_TIMEOUT_MS, undefined);
      if (read === undefined) throw new Error(`the job store did not answer the pauses read within ${CALL_TIMEOUT_MS} ms`);
      this.#readAt = Date.now();
      // Never back: a read that raced a newer one (or a lagging copy) keeps the newer board.
      if (read.version <= this.#version) return true;
      this.#version = read.version;
      const before = this.#board;
      this.#board = new PauseBoard(read.marks);
      this.#changed(before);
      return true;
    } catch (error) {
      this.#onError(error);
      return false;
    }
  }

  /** Tell the listeners, and set the timer of the board's next timed end (itself a change). */
  #changed(before: PauseBoard): void {
    if (this.#endTimer !== undefined) clearTimeout(this.#endTimer);
    this.#endTimer = undefined;
    const now = Date.now();
    const end = this.#board.nextEnd(now);
    if (end !== undefined && !this.#closed) {
      // setTimeout's longest wait is about 24.8 days: a later end is looked at again then.
      this.#endTimer = setTimeout(() => this.#changed(this.#board), Math.min(end - now + 1, 2 ** 31 - 1));
      this.#endTimer.unref();
    }
    for (const listener of this.#listeners) {
      try {
        listener(this.#board, before);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
