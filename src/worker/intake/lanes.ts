import type { TierPick } from '../config.js';
/** A queue as a lane: its weight, and its tier's rank (0 = high; lower ranks first under strict). */
export interface Lane {
  readonly weight: number;
  readonly rank: number;
}

/** What a lane's turn costs: one per turn (starts), or the messages it brought (receives, whose sizes differ). */
type TurnCost = 'turn' | 'message';

/** Per message: the most messages a lane may be owed (its pass behind its tier's floor, × its weight). */
const MOST_OWED = 40;

/**
 * Chooses which lane takes the next turn among those with work (a message to start, or a poller
 * waiting for room to receive). Within a tier, lanes are taken by weight:
 *   - per turn (starts): smooth weighted round-robin: each candidate's credit grows by its weight,
 *     the one with the most is taken and charged the total, so over any window lanes are taken in
 *     proportion to their weights, interleaved rather than in runs;
 *   - per message (receives): each lane's pass grows by what its turns brought ÷ its weight, and
 *     the lane with the least pass goes next. A receive is charged what it was granted and refunded
 *     what did not come, so a lane held to small receives (its buffer quota) takes more turns, and a
 *     lane whose receive is out when others take theirs is owed them when it is back, up to
 *     MOST_OWED messages (a lane that trickled for an hour is not owed the hour when it bursts).
 *     The floor of a tier is the pass of the last lane taken there (never going down); a lane that
 *     has work again (see `join`) is lifted to its busy peers' least pass, or to the floor when none
 *     is busy: idle time earns nothing.
 * Each picker keeps its own account: the receive side and the start side are counted apart.
 */
export class LanePicker<Q extends Lane> {
  readonly #pick: TierPick;
  readonly #cost: TurnCost;
  readonly #credit = new Map<Q, number>();
  readonly #pass = new Map<Q, number>();
  /** Per message, per tier rank: the pass of the last lane taken, never going down. */
  readonly #floor = new Map<number, number>();
  /** Strict: turns a lane with work has been passed over since its last one. */
  readonly #passed = new Map<Q, number>();

  constructor(pick: TierPick = { mode: 'weighted' }, cost: TurnCost = 'turn') {
    this.#pick = pick;
    this.#cost = cost;
  }

  /** Choose the lane whose turn it is among `candidates`, and count the turn. */
  choose(candidates: readonly Q[]): Q | undefined {
    const chosen = this.peek(candidates);
    if (chosen !== undefined) this.commit(candidates, chosen);
    return chosen;
  }

  /** The lane whose turn it is among `candidates`, the turn not counted (see commit). */
  peek(candidates: readonly Q[]): Q | undefined {
    if (candidates.length <= 1) return candidates[0];
    if (this.#pick.mode === 'weighted') return this.#byWeight(candidates);
    const top = Math.min(...candidates.map((c) => c.rank));
    const limit = Math.max(0, Math.ceil(1 / this.#pick.minShare) - 1);
    let starved: Q | undefined;
    for (const c of candidates) {
      if (c.rank === top || (this.#passed.get(c) ?? 0) < limit) continue;
      if (starved === undefined || (this.#passed.get(c) ?? 0) > (this.#passed.get(starved) ?? 0)) starved = c;
    }
    return starved ?? this.#byWeight(candidates.filter((c) => c.rank === top));
  }

  /** Count the turn `chosen` (a peek's answer among the same `candidates`) takes; per message, `messages` is what it was granted. */
  commit(candidates: readonly Q[], chosen: Q, messages = 1): void {
    if (this.#pick.mode === 'strict') {
      for (const c of candidates) this.#passed.set(c, c === chosen ? 0 : (this.#passed.get(c) ?? 0) + 1);
    }
    if (this.#cost === 'message') {
      const pass = this.#passOf(chosen);
      this.#floor.set(chosen.rank, Math.max(this.#floor.get(chosen.rank) ?? 0, pass));
      this.#pass.set(chosen, pass + messages / chosen.weight);
      return;
    }
    if (candidates.length <= 1) return;
    let among = candidates;
    if (this.#pick.mode === 'strict') {
      const top = Math.min(...candidates.map((c) => c.rank));
      if (chosen.rank !== top) return; // a lower lane's turn at its minimum share: no credit moves
      among = candidates.filter((c) => c.rank === top);
    }
    let total = 0;
    for (const c of among) {
      total += c.weight;
      this.#credit.set(c, (this.#credit.get(c) ?? 0) + c.weight);
    }
    this.#credit.set(chosen, this.#credit.get(chosen)! - total);
  }

  /** Per message: `messages` of a turn `lane` was charged for did not come (a receive brought fewer). */
  refund(lane: Q, messages: number): void {
    if (this.#cost === 'message' && messages > 0) this.#pass.set(lane, this.#passOf(lane) - messages / lane.weight);
  }

  /**
   * Per message: `lane` has work again after none; it is lifted to the least pass of `peers` of its
   * tier that have work, or to its tier's floor when none has (never lowered).
   */
  join(lane: Q, peers: Iterable<Q>): void {
    if (this.#cost !== 'message') return;
    let least = Number.POSITIVE_INFINITY;
    for (const p of peers) if (p !== lane && p.rank === lane.rank) least = Math.min(least, this.#passOf(p));
    if (least === Number.POSITIVE_INFINITY) least = this.#floor.get(lane.rank) ?? 0;
    this.#pass.set(lane, Math.max(this.#passOf(lane), least));
  }

  /** A lane's pass, no further behind its tier's floor than MOST_OWED messages. */
  #passOf(lane: Q): number {
    return Math.max(this.#pass.get(lane) ?? 0, (this.#floor.get(lane.rank) ?? 0) - MOST_OWED / lane.weight);
  }

  /** The candidate whose turn it is by weight (ties: the first). */
  #byWeight(candidates: readonly Q[]): Q {
    let best = candidates[0]!;
    let bestScore = Number.NEGATIVE_INFINITY;
    for (const c of candidates) {
      // Per turn: the most credit after this round's growth. Per message: the least pass after one more message.
      const score = this.#cost === 'message' ? -(this.#passOf(c) + 1 / c.weight) : (this.#credit.get(c) ?? 0) + c.weight;
      if (score > bestScore) {
        best = c;
        bestScore = score;
      }
    }
    return best;
  }
}

/**
 * How many received, unstarted messages `lane` may hold while other lanes have work (`busy`: the
 * lanes whose last poll found some), out of the worker's `prefetch`. Whichever lane has a message
 * buffered when a slot frees is the one that can start, so a lower lane holding the whole buffer
 * would take every other slot from a higher one. Strict: the top busy tier shares the buffer by
 * weight, a lower lane holds its minimum share; weighted: every lane its weight's share. A lane
 * that needs less than its share (`need`: a poll that found few asks for few) holds only that,
 * and the rest is shared by the others by weight (water-filling), so a queue whose work trickles
 * in does not keep a backlogged one of its tier to small receives (under strict, a lower tier
 * keeps its minimum share whatever the top tier needs). At least 1.
 */
export function bufferQuota<Q extends Lane>(
  pick: TierPick,
  lane: Q,
  busy: ReadonlySet<Q>,
  prefetch: number,
  need: (lane: Q) => number = () => Number.POSITIVE_INFINITY,
): number {
  // Alone with work (the common case: one queue), a lane may fill it; no allocation on that path.
  if (busy.size === 0 || (busy.size === 1 && busy.has(lane))) return Number.POSITIVE_INFINITY;
  let sharing = [...new Set(busy).add(lane)];
  if (pick.mode === 'strict') {
    const top = Math.min(...sharing.map((l) => l.rank));
    if (lane.rank > top) return Math.max(1, Math.ceil(prefetch * pick.minShare));
    sharing = sharing.filter((l) => l.rank === top);
  }
  // Water-filling: lanes that need less than their weight's share of what is left take what they
  // need; the rest is shared again among the others, until every lane left needs its share.
  let room = prefetch;
  for (;;) {
    const total = sharing.reduce((sum, l) => sum + l.weight, 0);
    const satisfied = sharing.filter((l) => Math.max(0, need(l)) < (room * l.weight) / total);
    if (satisfied.includes(lane)) return Math.max(1, Math.ceil(need(lane)));
    if (satisfied.length === 0) return Math.max(1, Math.ceil((room * lane.weight) / total));
    for (const l of satisfied) room -= Math.max(0, need(l));
    sharing = sharing.filter((l) => !satisfied.includes(l));
  }
}
