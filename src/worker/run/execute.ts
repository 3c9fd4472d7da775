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
  const startedAt = Date.now();
  return new Promise<Execution>((resolve) => {
    let done = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const timeout = o.timeoutMs === undefined ? undefined : setTimeout(() => lease.abort('JOB_TIMEOUT', timeoutMessage(o)), o.timeoutMs);
    const finish = (execution: Execution) => {
      if (done) return; // an abandoned handler settling late: its result has nowhere to go
      done = true;
      if (timeout !== undefined) clearTimeout(timeout);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      lease.whenAborted(undefined);
      resolve(execution);
    };
    const aborted = (abandoned: boolean): Execution => {
      const reason = toError(lease.abortReason);
      const code = (reason as { code?: AbortCode }).code;
      return { kind: 'aborted', code, reason, abandoned, processMs: Date.now() - startedAt };
    };
    function onAbort(): void {
      // The outcome now follows the signal; wait a little for a handler that honours it.
      graceTimer = setTimeout(() => finish(aborted(true)), o.graceMs);
    }
    const settled = (execution: () => Execution) => finish(lease.abortReason !== undefined ? aborted(false) : execution());
    if (lease.abortReason !== undefined) {
      // Never start a handler whose signal already fired (shutdown or a lost lease meanwhile).
      finish(aborted(false));
      return;
    }
    lease.whenAborted(onAbort);
    Promise.resolve()
      .then(handler)
      .then(
        (value: unknown) => settled(() => ({ kind: 'returned', value, processMs: Date.now() - startedAt })),
        (error: unknown) => settled(() => ({ kind: 'threw', error: toError(error), processMs: Date.now() - startedAt })),
      );
  });
}

function timeoutMessage(o: ExecuteOptions): string {
  return `${o.batch === true ? 'batch job' : 'job'} "${o.jobName}" timed out after ${o.timeoutMs} ms`;
}
