import { toError } from '../../core/errors.js';
import type { AbortCode, Interruptible } from '../hold/lease.js';

/** How a handler's run ended. */
export type Execution =
  /** `value`: what the handler returned (a batch handler's failed items). */
  | { readonly kind: 'returned'; readonly value: unknown; readonly processMs: number }
  | { readonly kind: 'threw'; readonly error: Error; readonly processMs: number }
  /**
   * The lease's signal fired first. `abandoned`: the handler had not settled `graceMs` after it,
   * and may still be running.
   */
  | {
      readonly kind: 'aborted';
      readonly code: AbortCode | undefined;
      readonly reason: Error;
      readonly abandoned: boolean;
      readonly processMs: number;
    };

export interface ExecuteOptions {
  /** Abort the lease with JOB_TIMEOUT after this long. */
  readonly timeoutMs: number | undefined;
  /** What timed out, for the message (made only then): `job "x"` or `batch job "x"`. */
  readonly jobName: string;
  readonly batch?: boolean;
  /** After the signal fires, how long the handler may take to settle before it is abandoned. */
  readonly graceMs: number;
}

/**
 * Run `handler` under the signal of `lease` (a message's lease, or a batch's run): resolve as soon
 * as it settles, or as soon as the signal fires (then after at most `graceMs` more). Never rejects.
 */
export function execute(handler: () => unknown, lease: Interruptible, o: ExecuteOptions): Promise<Execution> {
  return new Promise<Execution>((resolve) => watch(handler, lease, o, resolve));
}

/**
 * execute() for a caller that holds thousands of runs at once: `ended` is called once, with how
 * the run ended, and no promise waits on each run besides the handler's own. `ended` is called at
 * once when the signal fired before the handler could start.
 */
export function watch(handler: () => unknown, lease: Interruptible, o: ExecuteOptions, ended: (execution: Execution) => void): void {
  // Never start a handler whose signal already fired (shutdown or a lost lease meanwhile).
  if (lease.abortReason !== undefined) ended(aborted(lease, false, 0));
  else new Watch(lease, o, ended).run(handler);
}

/**
 * One handler run, watched: its timeout, its signal, its result, whichever ends it first. One
 * object per run rather than a closure per step: it lives as long as the handler runs, for every
 * job a worker holds.
 */
class Watch {
  readonly #startedAt = Date.now();
  #ended: ((execution: Execution) => void) | undefined;
  #timeout: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;

  constructor(
    readonly lease: Interruptible,
    readonly o: ExecuteOptions,
    ended: (execution: Execution) => void,
  ) {
    this.#ended = ended;
  }

  run(handler: () => unknown): void {
    const { lease, o } = this;
    if (o.timeoutMs !== undefined) this.#timeout = setTimeout(() => lease.abort('JOB_TIMEOUT', timeoutMessage(o)), o.timeoutMs);
    lease.whenAborted(this.#onAbort);
    try {
      // Inside the try too: a returned promise whose `then` or `constructor` getter throws fails the run, never execute().
      Promise.resolve(handler()).then(
        (value) => this.#settled(value, false),
        (error: unknown) => this.#settled(error, true),
      );
    } catch (error) {
      this.#settled(error, true);
    }
  }

  /** The outcome now follows the signal; wait a little for a handler that honours it. */
  readonly #onAbort = (): void => {
    this.#grace = setTimeout(() => this.#finish(aborted(this.lease, true, this.#startedAt)), this.o.graceMs);
  };

  #settled(value: unknown, threw: boolean): void {
    const processMs = Date.now() - this.#startedAt;
    if (this.lease.abortReason !== undefined) this.#finish(aborted(this.lease, false, this.#startedAt));
    else if (threw) this.#finish({ kind: 'threw', error: toError(value), processMs });
    else this.#finish({ kind: 'returned', value, processMs });
  }

  #finish(execution: Execution): void {
    const ended = this.#ended;
    if (ended === undefined) return; // an abandoned handler settling late: its result has nowhere to go
    this.#ended = undefined;
    if (this.#timeout !== undefined) clearTimeout(this.#timeout);
    if (this.#grace !== undefined) clearTimeout(this.#grace);
    this.lease.whenAborted(undefined);
    ended(execution);
  }
}

function aborted(lease: Interruptible, abandoned: boolean, startedAt: number): Execution {
  const reason = toError(lease.abortReason);
  const code = (reason as { code?: AbortCode }).code;
  return { kind: 'aborted', code, reason, abandoned, processMs: startedAt === 0 ? 0 : Date.now() - startedAt };
}

function timeoutMessage(o: ExecuteOptions): string {
  return `${o.batch === true ? 'batch job' : 'job'} "${o.jobName}" timed out after ${o.timeoutMs} ms`;
}
