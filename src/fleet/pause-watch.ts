import { PauseBoard } from '../core/pause.js';
import type { ControlNotices, ControlStore } from '../ports/control-store.js';

/** How often a worker asks whether the pauses changed: a resume reaches it within about this long. */
export const PAUSE_POLL_MS = 1_000;
/** How often it reads the store anyway (a change whose notice was lost: memcached was down for the writer). */
export const PAUSE_REREAD_MS = 30_000;

/** What the watch calls on a change: the board before and after (a timed pause's end is one too). */
export type PauseListener = (now: PauseBoard, before: PauseBoard) => void;

/**
 * A process's view of the pauses in force (a worker's, a producer's), kept current by one cheap
 * question a second: the version memcached holds (ControlNotices). The store is read when that
 * version moves, when memcached has none (it restarted: the reader tells it the version it read)
 * or cannot be asked (then each second), and every PAUSE_REREAD_MS besides. A store that cannot be
 * read keeps the last board: a pause seen stays in force, none seen stays none.
 */
export class PauseWatch {
  readonly #store: ControlStore;
  readonly #notices: ControlNotices | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #listeners: PauseListener[] = [];
  #board = new PauseBoard([]);
  #version = -1;
  #readAt = 0;
  /** The board's next timed end, when a listener must hear of it. */
  #nextEnd: number | undefined;
  #timer: NodeJS.Timeout | undefined;
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
      const seen = this.#notices === undefined ? 'unavailable' : await this.#notices.seen();
      const stale = now - this.#readAt >= PAUSE_REREAD_MS;
      if (seen === 'unavailable' || seen === undefined || seen !== String(this.#version) || stale) {
        const read = await this.#read();
        // memcached forgot the version (it restarted): put back the one just read, so the rest of the fleet asks once.
        if (seen === undefined && read) await this.#notices?.tellIfNone(String(this.#version));
      }
      if (this.#nextEnd !== undefined && this.#nextEnd <= Date.now()) this.#changed(this.#board);
    } finally {
      this.#busy = false;
    }
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }

  /** Read the store: false when it could not be read. */
  async #read(): Promise<boolean> {
    try {
      const { version, marks } = await this.#store.readPauses();
      this.#readAt = Date.now();
      if (version === this.#version) return true;
      this.#version = version;
      const before = this.#board;
      this.#board = new PauseBoard(marks);
      this.#changed(before);
      return true;
    } catch (error) {
      this.#onError(error);
      return false;
    }
  }

  #changed(before: PauseBoard): void {
    this.#nextEnd = this.#board.nextEnd(Date.now());
    for (const listener of this.#listeners) {
      try {
        listener(this.#board, before);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
