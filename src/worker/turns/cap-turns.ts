import { SQS_MAX_DELAY_SECONDS } from '../../core/sqs-limits.js';

/** Starts of a capped tenant remembered here, to tell how fast its jobs start… */
const STARTS_KEPT = 16;
/** …of the last minute: older ones say nothing of how fast it starts now. */
const STARTS_WINDOW_MS = 60_000;
/** Another tenant's job among a queue's last this many received: holding a capped tenant's jobs there would slow it. */
const CONTENDED_MESSAGES = 100;

interface Seen {
  readonly tenant: string | undefined;
  /** The queue's count of received messages when this tenant's last one came. */
  at: number;
}

/**
 * When a capped tenant's next turns come in this worker, and whether it shares its queue with
 * others now. A job over its tenant's cap that finds as many of its tenant's jobs waiting here as
 * may (the worker's room) while other tenants' jobs come from the same queue is re-sent once,
 * delayed to about its turn, rather than held (where it would brake their intake) or re-sent again
 * every few seconds. How soon: from how fast the tenant's jobs have started here (its last
 * STARTS_KEPT starts), the jobs of it waiting here ahead, and the turns this worker has already
 * given away to the jobs it re-sent. Pure bookkeeping: the caller says what time it is.
 *
 * Bounded: only tenants with a cap (a fixed list in the worker's options) are counted, and two
 * tenants per queue.
 */
export class CapTurns {
  /** Per queue, messages received, and the two most recent distinct tenants whose jobs came from it (undefined: jobs without one). */
  readonly #seen = new Map<string, { received: number; last: Seen; before: Seen | undefined }>();
  readonly #starts = new Map<string, number[]>();
  /** Per tenant, the turns given to jobs re-sent from here that have not come yet. */
  readonly #given = new Map<string, number[]>();

  /** A message of `tenant` (or without one) was received from `queueUrl`. */
  seen(queueUrl: string, tenant: string | undefined): void {
    const q = this.#seen.get(queueUrl);
    if (q === undefined) {
      this.#seen.set(queueUrl, { received: 1, last: { tenant, at: 1 }, before: undefined });
      return;
    }
    q.received++;
    if (q.last.tenant === tenant) q.last.at = q.received;
    else {
      q.before = q.last;
      q.last = { tenant, at: q.received };
    }
  }

  /**
   * Whether jobs of other tenants than `tenant` (or without one) are among the last
   * CONTENDED_MESSAGES received from `queueUrl`. If not, the capped tenant has the queue to itself:
   * its jobs may as well wait here, slowing the queue's intake to their pace, rather than be re-sent
   * (nobody is behind them). Counted in messages, not time: a slowed intake still sees the others.
   */
  contended(queueUrl: string, tenant: string): boolean {
    const q = this.#seen.get(queueUrl);
    if (q === undefined) return false;
    return [q.last, q.before].some((x) => x !== undefined && x.tenant !== tenant && q.received - x.at < CONTENDED_MESSAGES);
  }

  /** A job of `tenant` took one of its permits here at `now`. */
  started(tenant: string, now: number): void {
    let starts = this.#starts.get(tenant);
    if (starts === undefined) {
      starts = [];
      this.#starts.set(tenant, starts);
    }
    starts.push(now);
    while (starts.length > STARTS_KEPT || now - starts[0]! > STARTS_WINDOW_MS) starts.shift();
  }

  /**
   * Starts per millisecond of `tenant`'s jobs here lately, or undefined while unknown (fewer than
   * two starts). A tenant that has not started for a while counts that while too.
   */
  rate(tenant: string, now: number): number | undefined {
    const all = this.#starts.get(tenant);
    const starts = all?.filter((at) => now - at <= STARTS_WINDOW_MS);
    if (starts === undefined || starts.length < 2) return undefined;
    const first = starts[0]!;
    const last = starts[starts.length - 1]!;
    const between = (starts.length - 1) / Math.max(1, last - first);
    const untilNow = starts.length / Math.max(1, now - first);
    return Math.min(between, untilNow);
  }

  /**
   * The delay, in whole seconds (1 to SQS's 900), for a job of `tenant` re-sent now with `waiting`
   * of its jobs waiting here: to about its turn, after those and after the turns already given to
   * jobs re-sent before it; the turn is then given to it. While the rate is unknown: `fallback`.
   */
  deferral(tenant: string, waiting: number, fallback: number, now: number): number {
    const rate = this.rate(tenant, now);
    if (rate === undefined) return fallback;
    const given = (this.#given.get(tenant) ?? []).filter((at) => at > now);
    // After those waiting here and those re-sent before it, at the rate the tenant starts now.
    const turn = now + (waiting + given.length) / rate;
    const latest = now + SQS_MAX_DELAY_SECONDS * 1000;
    // A turn past SQS's longest delay is not given away: the copy comes back sooner and asks again.
    if (turn <= latest) given.push(turn);
    if (given.length > 0) this.#given.set(tenant, given);
    else this.#given.delete(tenant);
    return Math.max(1, Math.round((Math.min(turn, latest) - now) / 1000));
  }
}
