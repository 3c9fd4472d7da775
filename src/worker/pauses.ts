import type { Logger } from 'pino';
import { describeScope, type PauseBoard, type PauseMark, scopeKey } from '../core/pause.js';
import { queueNameOf } from '../core/queue-url.js';
import type { PauseWatch } from '../fleet/pause-watch.js';

/**
 * The pauses as a worker uses them: the board its turns read (turns/turn.ts), a wait for a paused
 * queue's pollers (intake/poller.ts), and the changes the waiting room wakes on. Built on the
 * fleet's PauseWatch, which a worker has when its job store keeps pauses.
 */
export class WorkerPauses {
  readonly #watch: PauseWatch;
  readonly #log: Logger;
  readonly #warned = new Set<string>();
  /** The pauses in force when last told (key → when it was made): what a change is logged against. */
  #inForce = new Map<string, number>();
  /** Pollers of paused queues waiting for a change. */
  #waiting: (() => void)[] = [];

  constructor(watch: PauseWatch, log: Logger) {
    this.#watch = watch;
    this.#log = log;
    watch.listen((now) => {
      this.#logChanges(now);
      const waiting = this.#waiting;
      this.#waiting = [];
      for (const wake of waiting) wake();
    });
  }

  /** The pauses as last read (a second old at most). */
  get board(): PauseBoard {
    return this.#watch.board;
  }

  /** Hear of each change of the board (a resume, a pause, a timed pause's end). */
  listen(listener: (board: PauseBoard) => void): void {
    this.#watch.listen((now) => listener(now));
  }

  /**
   * Resolves once `queueUrl` is not paused (at once when it is not), or `signal` aborts: a paused
   * queue is simply not received from.
   */
  async queueOpen(queueUrl: string, signal: AbortSignal): Promise<void> {
    const name = queueNameOf(queueUrl);
    while (!signal.aborted && this.board.queue(name, Date.now()) !== undefined) {
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          resolve();
        };
        signal.addEventListener('abort', done, { once: true });
        this.#waiting.push(done);
      });
    }
  }

  /** A job or tenant pause met on a FIFO queue, where it does not hold (said once per pause and queue). */
  warnOnce(mark: PauseMark, queueUrl: string): void {
    const key = `${scopeKey(mark.scope)} ${queueUrl}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#log.warn(
      { pause: scopeKey(mark.scope), queueUrl },
      `${describeScope(mark.scope)} is paused, but not on the FIFO queue ${queueNameOf(queueUrl)}: a hand-back would break its groups' order. Pause the queue instead`,
    );
  }

  start(): Promise<void> {
    return this.#watch.start();
  }

  /** Read them again now (a Lambda invocation after its container was frozen: the watch's timer did not run meanwhile). */
  refresh(): Promise<void> {
    return this.#watch.check();
  }

  close(): void {
    this.#watch.close();
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** Log each pause that came into force (made, or made again) and each that ended (resumed, or its time ran out). */
  #logChanges(now: PauseBoard): void {
    const at = Date.now();
    const was = this.#inForce;
    const is = new Map<string, number>();
    for (const m of now.marks) {
      const key = scopeKey(m.scope);
      if (!now.holds(key, at)) continue;
      is.set(key, m.at);
      if (was.get(key) !== m.at)
        this.#log.info({ pause: key, by: m.by, reason: m.reason, until: m.until }, `${describeScope(m.scope)} paused`);
    }
    for (const key of was.keys()) if (!is.has(key)) this.#log.info({ pause: key }, `${key} resumed`);
    this.#inForce = is;
  }
}
