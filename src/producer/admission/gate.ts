import { QueueFullError } from '../../core/errors.js';
import type { QueueView } from './estimate.js';

/**
 * Turns due within this long count against the room for new requests: they may come back any
 * moment (Retry-After is in whole seconds). Turns due later do not: the refusals spaced them at the
 * drain rate, so by their time the workers have made their room.
 */
const PRESSING_MS = 1_000;

/** How a refused request's turn is kept for it. */
interface Reservation {
  /** From when the request may come back (what Retry-After told it). */
  readonly dueAt: number;
  readonly count: number;
}

interface GateSettings {
  /** The most a job should wait: the high-water mark is capacity × SLA. */
  readonly slaSeconds: number;
  /** How long after its time a turn is kept for a request that was told to come back. */
  readonly graceMs: number;
  /**
   * The share of the mark kept for returning requests: new requests fill the backlog up to
   * mark × (1 − headroom); a request back on its turn is admitted up to mark × (1 − headroom / 2)
   * (the room kept for it may have been eaten by others meanwhile), never above it: a backlog at
   * the mark itself makes the last job's wait the SLA, and the workers' pace wanders about it.
   */
  readonly headroom: number;
  /**
   * While the capacity is not measured here, the mark is at least this many waiting in the queue
   * beyond what the workers hold (their prefetch, which they take whatever the load), or the kept or
   * drained capacity × the SLA if larger.
   */
  readonly firstMark: number;
  /** The longest Retry-After told: a request that would wait longer is told this and keeps no turn. */
  readonly maxRetryAfterMs: number;
}

/**
 * The decision for one queue: admit while the backlog stays under the high-water mark (drain
 * capacity × SLA, less the headroom kept for returning requests), and refuse above it with the time until there is room, so that a job admitted
 * waits at most the SLA. A refusal keeps a turn for the request (by its key: the same job and
 * args, or the same job id), so that a client that honours Retry-After finds room when it comes
 * back instead of racing new requests for it: the refusals space the turns at the drain rate, and
 * new requests are admitted only into room no turn due now holds (a turn not claimed leaves a
 * hole they may fill). A request that would be told to wait longer than `maxRetryAfterMs` is told
 * that much and keeps no turn (it comes back as a new request). Until the capacity is measured
 * (from the first sample on: the estimate says so), the mark is the larger of `firstMark` and the
 * capacity kept or seen drained × the SLA: a small first mark keeps the workers busy while the
 * backlog it lets in waits little; with no capacity known at all a refusal keeps no turn. Pure:
 * time and the queue's view are given.
 */
export class AdmissionGate {
  readonly #s: GateSettings;
  readonly #turns = new Map<string, Reservation>();
  /** The turns by due time (a later refusal can be due sooner: the backlog drained meanwhile); claimed ones are skipped when met. */
  readonly #order: { readonly key: string; readonly turn: Reservation }[] = [];
  /** The messages the turns hold room for. */
  #held = 0;

  constructor(settings: GateSettings) {
    this.#s = settings;
  }

  /** Admit `count` messages under `key`, or throw QueueFullError with when to come back. */
  admit(key: string, count: number, view: QueueView, now: number): void {
    const pressing = this.#pressing(now);
    const mark = this.markOf(view);
    const fill = mark * (1 - this.#s.headroom);
    const turn = this.#turns.get(key);
    if (turn !== undefined && now >= turn.dueAt) {
      this.#drop(key, turn);
      if (view.backlog + count <= mark * (1 - this.#s.headroom / 2)) return;
    } else if (turn !== undefined) {
      throw this.#refusal(view, mark, turn.dueAt - now);
    } else if (view.backlog + pressing + count <= fill) {
      return;
    }
    // No capacity known yet: come back in a second (the first drain counts are in by then), as a new
    // request. Turns are spaced at the drain rate; without one they would all fall due at once and
    // hold the first mark's room against every new request.
    if (view.capacity === undefined) throw this.#refusal(view, mark, 1_000);
    // Room for it once the backlog and the turns kept before it have drained below the fill line.
    const excess = view.backlog + this.#held + count - fill;
    const waitMs = view.capacity > 0 ? (excess * 1000) / view.capacity : 60_000;
    // Whole seconds, as Retry-After says it: the turn is due when an honouring client returns.
    const retryAfterMs = Math.max(1, Math.ceil(waitMs / 1000)) * 1000;
    if (retryAfterMs > this.#s.maxRetryAfterMs) throw this.#refusal(view, mark, this.#s.maxRetryAfterMs);
    const kept = { dueAt: now + retryAfterMs, count };
    this.#turns.set(key, kept);
    this.#order.splice(this.#firstDueAfter(kept.dueAt), 0, { key, turn: kept });
    this.#held += count;
    throw this.#refusal(view, mark, retryAfterMs);
  }

  /** The high-water mark for `view`: capacity × SLA once measured; before, at least `firstMark` beyond what the workers hold. */
  markOf(view: QueueView): number {
    const mark = (view.capacity ?? 0) * this.#s.slaSeconds;
    return view.basis === 'measured' ? mark : Math.max(this.#s.firstMark + view.held, mark);
  }

  /** The messages the kept turns hold room for (for tests and stats). */
  get held(): number {
    return this.#held;
  }

  /** Drop the turns whose grace has passed (admit does this on its way; stats call it first). */
  prune(now: number): void {
    this.#pressing(now);
  }

  /** The index of the first turn due after `dueAt` (binary search: the order is by due time). */
  #firstDueAfter(dueAt: number): number {
    let lo = 0;
    let hi = this.#order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#order[mid]!.turn.dueAt <= dueAt) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #drop(key: string, turn: Reservation): void {
    this.#turns.delete(key);
    this.#held -= turn.count;
  }

  /**
   * The messages of the turns due within PRESSING_MS (or due already and still within their
   * grace); turns past their grace are dropped on the way. Looks only at the front of the order.
   */
  #pressing(now: number): number {
    let sum = 0;
    let i = 0;
    for (; i < this.#order.length; i++) {
      const { key, turn } = this.#order[i]!;
      if (this.#turns.get(key) !== turn) continue; // claimed, or given again later
      if (now > turn.dueAt + this.#s.graceMs) {
        this.#drop(key, turn);
        continue;
      }
      if (turn.dueAt > now + PRESSING_MS) break;
      sum += turn.count;
    }
    // What lies before the first pressing turn is gone for good: drop it from the order.
    let gone = 0;
    while (gone < i && this.#turns.get(this.#order[gone]!.key) !== this.#order[gone]!.turn) gone++;
    if (gone > 0) this.#order.splice(0, gone);
    return sum;
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
