import { QueueFullError } from '../../core/errors.js';
import type { QueueView } from './estimate.js';

const EXPIRE_EVERY_MS = 250;

/** How a refused request's turn is kept for it. */
interface Reservation {
  /** From when the request may come back (what Retry-After told it). */
  readonly dueAt: number;
  readonly count: number;
}

export interface GateSettings {
  /** The most a job should wait: the high-water mark is capacity × SLA. */
  readonly slaSeconds: number;
  /** How long after its time a turn is kept for a request that was told to come back. */
  readonly graceMs: number;
  /** A returning request is admitted up to this share above the mark (the room kept for it may be eaten by others). */
  readonly tolerance: number;
}

/**
 * The decision for one queue: admit while the backlog stays under the high-water mark (drain
 * capacity × SLA), and refuse above it with the time until there is room, so that a job admitted
 * waits at most the SLA. A refusal keeps a turn for the request (by its key: the same job and
 * args, or the same job id), so that a client that honours Retry-After finds room when it comes
 * back instead of racing new requests for it: new requests are admitted only into room no
 * returning request holds. Pure: time and the queue's view are given.
 */
export class AdmissionGate {
  readonly #s: GateSettings;
  readonly #turns = new Map<string, Reservation>();
  #expiredAt = Number.NEGATIVE_INFINITY;
  /** The messages the turns hold room for. */
  #held = 0;

  constructor(settings: GateSettings) {
    this.#s = settings;
  }

  /** Admit `count` messages under `key`, or throw QueueFullError with when to come back. */
  admit(key: string, count: number, view: QueueView | undefined, now: number): void {
    this.#expire(now);
    // No estimate yet (no sample, or the workers' capacity not measured): admit.
    if (view?.capacity === undefined) return;
    const mark = view.capacity * this.#s.slaSeconds;
    const turn = this.#turns.get(key);
    if (turn !== undefined && now >= turn.dueAt) {
      this.#drop(key, turn);
      if (view.backlog + count <= mark * (1 + this.#s.tolerance)) return;
    } else if (turn !== undefined) {
      throw this.#refusal(view, mark, turn.dueAt - now);
    } else if (view.backlog + this.#held + count <= mark) {
      return;
    }
    // Room for it once the backlog and the turns kept before it have drained below the mark.
    const excess = view.backlog + this.#held + count - mark;
    const waitMs = view.capacity > 0 ? (excess * 1000) / view.capacity : 60_000;
    // Whole seconds, as Retry-After says it: the turn is due when an honouring client returns.
    const retryAfterMs = Math.max(1, Math.ceil(waitMs / 1000)) * 1000;
    this.#turns.set(key, { dueAt: now + retryAfterMs, count });
    this.#held += count;
    throw this.#refusal(view, mark, retryAfterMs);
  }

  /** The messages the kept turns hold room for (for tests and stats). */
  get held(): number {
    return this.#held;
  }

  #drop(key: string, turn: Reservation): void {
    this.#turns.delete(key);
    this.#held -= turn.count;
  }

  /** Drop the turns not claimed within the grace (a full look at most every EXPIRE_EVERY_MS: turns are not kept in due order). */
  #expire(now: number): void {
    if (now < this.#expiredAt + EXPIRE_EVERY_MS) return;
    this.#expiredAt = now;
    for (const [key, t] of this.#turns) if (now > t.dueAt + this.#s.graceMs) this.#drop(key, t);
  }

  #refusal(view: QueueView, mark: number, retryAfterMs: number): QueueFullError {
    return new QueueFullError({
      retryAfterMs: Math.max(1000, Math.ceil(retryAfterMs / 1000) * 1000),
      backlog: Math.round(view.backlog),
      highWaterMark: Math.round(mark),
      drainPerSecond: view.capacity ?? 0,
    });
  }
}
