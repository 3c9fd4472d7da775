import type { JobInfo } from '../core/job-events.js';
import { type Abortable, Lease } from './hold/lease.js';

/**
 * What the worker has under way: the handlers running (a message's lease, or a batch's run; one
 * handler slot of `concurrency` each), and the settles still in flight (which stop() waits for).
 */
export class Activity {
  readonly #concurrency: number;
  readonly #running = new Set<Abortable>();
  readonly #settling = new Set<Promise<void>>();
  readonly #onError: (where: string, error: unknown) => void;
  #idleWaiters: (() => void)[] = [];

  constructor(concurrency: number, onError: (where: string, error: unknown) => void) {
    this.#concurrency = concurrency;
    this.#onError = onError;
  }

  /** Handlers running now. */
  get running(): ReadonlySet<Abortable> {
    return this.#running;
  }

  /** What events say of each job whose handler runs now (not one still being claimed; a batch's run is not one job: left out). */
  *jobsRunning(): Generator<JobInfo> {
    for (const handler of this.#running)
      if (handler instanceof Lease && handler.handlerStarted && handler.info !== undefined) yield handler.info;
  }

  /** A handler slot is free. */
  hasFreeSlot(): boolean {
    return this.#running.size < this.#concurrency;
  }

  started(handler: Abortable): void {
    this.#running.add(handler);
  }

  /** A handler ended: its slot is free. */
  ended(handler: Abortable): void {
    this.#running.delete(handler);
    if (this.#running.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  /** Resolves once no handler runs. */
  idle(): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Keep track of settling work until it ends; a failure is reported, never thrown. */
  follow(work: Promise<void>): void {
    const tracked = work.catch((error: unknown) => this.#onError('settle', error)).finally(() => this.#settling.delete(tracked));
    this.#settling.add(tracked);
  }

  /** Resolves once every settle, including those started meanwhile, has ended. */
  async settled(): Promise<void> {
    while (this.#settling.size > 0) await Promise.all([...this.#settling]);
  }
}
