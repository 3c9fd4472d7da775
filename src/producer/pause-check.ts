import { JobPausedError } from '../core/pause.js';
import { isFifoQueue, queueNameOf } from '../core/queue-url.js';
import type { PauseWatch } from '../fleet/pause-watch.js';

/**
 * A producer that refuses jobs while they are paused (`whilePaused: 'refuse'`): it watches the
 * pauses as a worker does (a question to memcached a second, the store when they change), from its
 * first enqueue on, and throws JobPausedError for a job whose queue, job type or tenant is paused.
 */
export class PauseCheck {
  readonly #watch: PauseWatch;
  #started: Promise<void> | undefined;

  constructor(watch: PauseWatch) {
    this.#watch = watch;
  }

  /** Throw JobPausedError when `job` for `tenant` on `queueUrl` is paused now. */
  async refuse(job: string, tenant: string | undefined, queueUrl: string): Promise<void> {
    this.#started ??= this.#watch.start();
    await this.#started;
    const now = Date.now();
    const board = this.#watch.board;
    // As the workers hold them: on a FIFO queue only a pause of the queue itself.
    const mark = board.queue(queueNameOf(queueUrl), now) ?? (isFifoQueue(queueUrl) ? undefined : board.job(job, tenant, now));
    if (mark !== undefined) throw new JobPausedError(job, mark, now);
  }

  close(): void {
    this.#watch.close();
  }
}
