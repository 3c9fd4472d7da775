import { toError } from '../../core/errors.js';
import type { Abortable, AbortCode } from '../hold/lease.js';

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
  readonly timeoutMessage: string;
  /** After the signal fires, how long the handler may take to settle before it is abandoned. */
  readonly graceMs: number;
}

/**
 * Run `handler` under the signal of `lease` (a message's lease, or a batch's run): resolve as soon
 * as it settles, or as soon as the signal fires (then after at most `graceMs` more). Never rejects.
 */
export function execute(handler: () => unknown, lease: Abortable, o: ExecuteOptions): Promise<Execution> {
  const startedAt = Date.now();
  const signal = lease.signal;
  return new Promise<Execution>((resolve) => {
    let done = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const timeout = o.timeoutMs === undefined ? undefined : setTimeout(() => lease.abort('JOB_TIMEOUT', o.timeoutMessage), o.timeoutMs);
    const finish = (execution: Execution) => {
      if (done) return; // an abandoned handler settling late: its result has nowhere to go
      done = true;
      if (timeout !== undefined) clearTimeout(timeout);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      signal.removeEventListener('abort', onAbort);
      resolve(execution);
    };
    const aborted = (abandoned: boolean): Execution => {
      const reason = toError(signal.reason);
      const code = (reason as { code?: AbortCode }).code;
      return { kind: 'aborted', code, reason, abandoned, processMs: Date.now() - startedAt };
    };
    function onAbort(): void {
      // The outcome now follows the signal; wait a little for a handler that honours it.
      graceTimer = setTimeout(() => finish(aborted(true)), o.graceMs);
    }
    const settled = (execution: () => Execution) => finish(signal.aborted ? aborted(false) : execution());
    if (signal.aborted) {
      // Never start a handler whose signal already fired (shutdown or a lost lease meanwhile).
      finish(aborted(false));
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve()
      .then(handler)
      .then(
        (value: unknown) => settled(() => ({ kind: 'returned', value, processMs: Date.now() - startedAt })),
        (error: unknown) => settled(() => ({ kind: 'threw', error: toError(error), processMs: Date.now() - startedAt })),
      );
  });
}
