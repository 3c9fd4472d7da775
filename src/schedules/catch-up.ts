import { cronRecurrence, everyRecurrence, type Recurrence } from './recurrence.js';

/*
 * Which due occurrences a tick fires: the ones from the first not fired yet to now. Normally that
 * is one, a second or two late. After every worker was down there may be many, and `catchUp` says
 * which of them still run; the others are counted as skipped (each schedule shows how many).
 */

/**
 * What runs of occurrences more than ON_TIME_S late (after every worker was down): `none`: none of
 * them; `latest`: the latest due, when none is on time; `{ within, max }`: every one at most
 * `within` seconds late. Occurrences at most ON_TIME_S late always run, by the overlap rule (a tick delayed by a busy
 * store or a restarting worker is not downtime), oldest first; `max` caps how many run at once
 * (MAX_CATCH_UP for the others), the latest kept.
 */
export type CatchUp = 'none' | 'latest' | { readonly withinS: number; readonly max: number };

/** How late an occurrence may be and still count as on time: a tick that waited for a busy store, a worker restarting. */
export const ON_TIME_S = 60;
/** The most occurrences `{ within, max }` runs at once. */
export const MAX_CATCH_UP = 1_000;
/** Skipped occurrences of a cron are counted one by one up to this many (beyond it, this many are counted). */
const COUNT_CAP = 10_000;

/** What a tick does with a schedule whose first unfired occurrence is `fromS`. */
export interface Due {
  /** The occurrences to fire now, oldest first. */
  readonly fire: readonly number[];
  /** Due occurrences that do not run (a cron's counted up to 10,000). */
  readonly skipped: number;
  /** The first occurrence after now: where the schedule waits next; undefined when it has none left. */
  readonly next: number | undefined;
}

export function dueAt(r: Recurrence, fromS: number, nowS: number, catchUp: CatchUp): Due {
  const next = r.next(nowS);
  const latest = r.last(nowS);
  if (latest === undefined || latest < fromS) return { fire: [], skipped: 0, next: fromS > nowS ? fromS : next };
  const due = countBetween(r, fromS, latest);
  const fire = chosen(r, fromS, latest, nowS, catchUp);
  return { fire, skipped: due - fire.length, next };
}

function chosen(r: Recurrence, fromS: number, latest: number, nowS: number, catchUp: CatchUp): number[] {
  const windowS = typeof catchUp === 'object' ? Math.max(catchUp.withinS, ON_TIME_S) : ON_TIME_S;
  const cap = typeof catchUp === 'object' ? catchUp.max : MAX_CATCH_UP;
  const oldest = Math.max(fromS, nowS - windowS);
  const out: number[] = [];
  for (let at: number | undefined = latest; at !== undefined && at >= oldest && out.length < cap; at = r.last(at - 1)) out.unshift(at);
  return out.length === 0 && catchUp === 'latest' ? [latest] : out;
}

/** Occurrences from `fromS` to the occurrence `toS`, both included (`fromS` need not be one). */
function countBetween(r: Recurrence, fromS: number, toS: number): number {
  const first = r.next(fromS - 1);
  if (first === undefined || first > toS) return 0;
  if (r.periodS !== undefined) return Math.round((toS - first) / r.periodS) + 1;
  let n = 1;
  for (let at = r.next(first); at !== undefined && at <= toS && n < COUNT_CAP; at = r.next(at)) n++;
  return n;
}

/** `r` within `[startS, endS]` (either open when undefined). */
export function bounded(r: Recurrence, startS: number | undefined, endS: number | undefined): Recurrence {
  const within = (at: number | undefined) => (at === undefined || (endS !== undefined && at > endS) ? undefined : at);
  return {
    periodS: r.periodS,
    next: (afterS) => within(r.next(startS === undefined ? afterS : Math.max(afterS, startS - 1))),
    last: (atS) => {
      const at = r.last(endS === undefined ? atS : Math.min(atS, endS));
      return at === undefined || (startS !== undefined && at < startS) ? undefined : at;
    },
  };
}

/**
 * Where a schedule put now (created, or changed) waits: its first occurrence from now on; with a
 * `start` at most ON_TIME_S ago, from its start, as any occurrence that late still runs (a put
 * that took a moment past it, `start: new Date()`). Never one at or before the last it fired.
 */
export function firstDue(r: Recurrence, nowS: number, startS: number | undefined, lastFired: number | undefined): number | undefined {
  const from = startS !== undefined && startS < nowS && nowS - startS <= ON_TIME_S ? startS : nowS;
  return r.next(Math.max(from - 1, lastFired ?? -Infinity));
}

/** A schedule's occurrences (its cron in `tz`, or its every on a grid from its start), within its start and end; both already checked. */
export function occurrencesOf(s: {
  readonly cron?: string | undefined;
  readonly every?: string | undefined;
  readonly tz: string;
  readonly startS?: number | undefined;
  readonly endS?: number | undefined;
}): Recurrence {
  const base = s.every !== undefined ? everyRecurrence(s.every, s.startS ?? 0) : cronRecurrence(s.cron!, s.tz);
  return bounded(base, s.startS, s.endS);
}
