import { toError } from '../../core/errors.js';
import type { Execution } from '../decide/decide.js';
import type { AbortCode, Interruptible } from '../hold/lease.js';

interface ExecuteOptions {
  /** Abort the lease with JOB_TIMEOUT after this long. */
  readonly timeoutMs: number | undefined;
  /** What timed out, for the message (made only then): `job "x"` or `batch job "x"`. */
  readonly jobName: string;
  readonly batch?: boolean;
  /** After the signal fires, how long the handler may take to settle before it is abandoned. */
  readonly graceMs: number;
}

/**
 * Run `handler` under the signal of `lease` (a batch's run): resolve as soon as it settles, or as
 * soon as the signal fires (then after at most `graceMs` more). Never rejects.
 */
export function execute(handler: () => unknown, lease: Interruptible, o: ExecuteOptions): Promise<Execution> {
  return new Promise<Execution>((resolve) => new Resolving(lease, o, handler, resolve).run());
}

/**
 * One handler run, watched: its timeout, its signal, its result, whichever ends it first; then
 * `ended` is called once, with how. A class to extend rather than closures: the worker's run of a
 * message is one of these (its Delivery, worker/delivery.ts), one object for as long as the handler runs, for every
 * job a worker holds. `ended` is called at once when the signal fired before the handler could start.
 */
export abstract class Watched<L extends Interruptible = Interruptible> {
  #startedAt = 0;
  #over = false;
  #timeout: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;

  constructor(
    readonly lease: L,
    /** Abort the lease with JOB_TIMEOUT after this long. */
    readonly timeoutMs: number | undefined,
    /** After the signal fires, how long the handler may take to settle before it is abandoned. */
    readonly graceMs: number,
  ) {}

  /** Call the handler. */
  protected abstract call(): unknown;

  /** Called once, with how the run ended. */
  protected abstract ended(execution: Execution): void;

  /** What a timeout says (made only then). */
  abstract timeoutMessage(): string;

  /** Start the handler (never one whose signal already fired: shutdown or a lost lease meanwhile). */
  run(): void {
    const lease = this.lease;
    if (lease.abortReason !== undefined) {
      this.#end(aborted(lease, false, 0));
      return;
    }
    this.#startedAt = Date.now();
    if (this.timeoutMs !== undefined) this.#timeout = setTimeout(timedOut, this.timeoutMs, this);
    lease.whenAborted(this);
    try {
      // Inside the try too: a returned promise whose `then` or `constructor` getter throws fails the run, never the worker.
      // Bound methods: no closure, and no context kept for them, per running job.
      Promise.resolve(this.call()).then(this.#returned.bind(this), this.#threw.bind(this));
    } catch (error) {
      this.#settled(error, true);
    }
  }

  /** The lease's signal fired: the outcome now follows it; wait a little for a handler that honours it. */
  onAbort(): void {
    this.#grace = setTimeout(abandoned, this.graceMs, this);
  }

  #returned(value: unknown): void {
    this.#settled(value, false);
  }

  #threw(error: unknown): void {
    this.#settled(error, true);
  }

  #settled(value: unknown, threw: boolean): void {
    const processMs = Date.now() - this.#startedAt;
    if (this.lease.abortReason !== undefined) this.#end(aborted(this.lease, false, this.#startedAt));
    else if (threw) this.#end({ kind: 'threw', error: toError(value), processMs });
    else this.#end({ kind: 'returned', value, processMs });
  }

  /** Once: an abandoned handler settling late has its result go nowhere. */
  #end(execution: Execution): void {
    if (this.#over) return;
    this.#over = true;
    if (this.#timeout !== undefined) clearTimeout(this.#timeout);
    if (this.#grace !== undefined) clearTimeout(this.#grace);
    this.lease.whenAborted(undefined);
    this.ended(execution);
  }

  /** The grace after the signal ran out: the handler is abandoned. */
  abandon(): void {
    this.#end(aborted(this.lease, true, this.#startedAt));
  }
}

// Timer callbacks given the run as their argument: no closure per run.
function timedOut(w: Watched): void {
  w.lease.abort('JOB_TIMEOUT', w.timeoutMessage());
}

function abandoned(w: Watched): void {
  w.abandon();
}

/** execute()'s run: resolves its promise. */
class Resolving extends Watched {
  constructor(
    lease: Interruptible,
    readonly o: ExecuteOptions,
    readonly handler: () => unknown,
    readonly resolve: (execution: Execution) => void,
  ) {
    super(lease, o.timeoutMs, o.graceMs);
  }

  protected call(): unknown {
    return this.handler();
  }

  protected ended(execution: Execution): void {
    this.resolve(execution);
  }

  timeoutMessage(): string {
    return `${this.o.batch === true ? 'batch job' : 'job'} "${this.o.jobName}" timed out after ${this.timeoutMs} ms`;
  }
}

function aborted(lease: Interruptible, abandoned: boolean, startedAt: number): Execution {
  const reason = toError(lease.abortReason);
  const code = (reason as { code?: AbortCode }).code;
  return { kind: 'aborted', code, reason, abandoned, processMs: startedAt === 0 ? 0 : Date.now() - startedAt };
}
