import type { ProgressFn } from '../core/job.js';
import type { ProgressUpdate } from '../ports/status-store.js';

export type { ProgressFn } from '../core/job.js';

/** For jobs that are not tracked: nothing is written, nothing is kept. */
export const NO_PROGRESS: ProgressFn = Object.assign(() => {}, { add: () => {}, data: () => {} });

/**
 * Coalesces one run's progress into at most one store write per `intervalMs` (the last `done`,
 * `total` and `data` win; `add`s are summed), and writes what is left on flush(). A failed write is
 * reported and dropped: progress is advisory, the next write carries the latest values.
 */
export class ProgressReporter {
  readonly fn: ProgressFn;
  readonly #write: (update: ProgressUpdate) => Promise<void>;
  readonly #intervalMs: number;
  readonly #onError: (error: unknown) => void;
  #pending: { done?: number; total?: number; add: number; data?: unknown; hasData: boolean } | undefined;
  #lastWriteAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;

  constructor(write: (update: ProgressUpdate) => Promise<void>, intervalMs: number, onError: (error: unknown) => void) {
    this.#write = write;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
    const pending = () => (this.#pending ??= { add: 0, hasData: false });
    this.fn = Object.assign(
      (done: number, total?: number) => {
        if (!Number.isFinite(done)) return;
        const p = pending();
        p.done = done;
        p.add = 0; // an absolute value replaces the adds before it
        if (total !== undefined && Number.isFinite(total)) p.total = total;
        this.#schedule();
      },
      {
        add: (n: number) => {
          if (!Number.isFinite(n) || n === 0) return;
          const p = pending();
          // After an absolute value in the same write, add to it (one write cannot both set and add).
          if (p.done === undefined) p.add += n;
          else p.done += n;
          this.#schedule();
        },
        data: (value: unknown) => {
          const p = pending();
          p.data = value;
          p.hasData = true;
          this.#schedule();
        },
      },
    );
  }

  /** Write what is pending now, after any write in flight, until nothing is left (the run ended). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      this.#timer = undefined;
      if (this.#writing !== undefined) await this.#writing;
      else if (this.#pending !== undefined) await this.#send();
      else return;
    }
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#writing !== undefined) return;
    const wait = this.#lastWriteAt + this.#intervalMs - Date.now();
    if (wait <= 0) {
      void this.#send();
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#send();
    }, wait);
    this.#timer.unref();
  }

  async #send(): Promise<void> {
    const p = this.#pending;
    if (p === undefined) return;
    this.#pending = undefined;
    this.#lastWriteAt = Date.now();
    const update: ProgressUpdate = {
      ...(p.done === undefined ? {} : { done: p.done }),
      ...(p.add === 0 ? {} : { add: p.add }),
      ...(p.total === undefined ? {} : { total: p.total }),
      ...(p.hasData ? { data: p.data } : {}),
    };
    this.#writing = this.#write(update)
      .catch(this.#onError)
      .finally(() => {
        this.#writing = undefined;
        if (this.#pending !== undefined) this.#schedule(); // calls that came during the write
      });
    await this.#writing;
  }
}
