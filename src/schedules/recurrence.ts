import { Cron } from 'croner';
import { everySeconds, lastOnGrid, nextOnGrid } from './every.js';

/*
 * When a schedule's occurrences fall, in epoch seconds. Cron patterns are read by croner (pinned:
 * its DST handling changed between majors; test/unit/schedules/recurrence.test.ts holds it to the
 * rule below at real 2027 transitions), `every` by our own grid.
 *
 * The DST rule (docs/guide/schedules.md): a cron pattern runs on the local clock of its zone.
 * - A fixed time (one value, a list or a range in the seconds, minutes and hours fields, no `*`,
 *   `?` or step: `30 2 * * *`, `0 2,14 * * *`) runs once a day whatever the clock does: a local time the
 *   clock skips runs at the first instant after the gap (02:30 on a spring-forward night runs at
 *   03:00); a local time the clock passes twice runs on its first pass only.
 * - A pattern with a `*` or a step in those fields follows the clock: a skipped local time does not
 *   run, and a repeated one runs on both passes (an hourly job runs every real hour).
 * - `every` is a fixed interval in real time, on a grid from the schedule's start: no zone.
 * EventBridge Scheduler skips a time that does not exist and runs a repeated one once.
 */

/** A schedule's occurrences, in whole epoch seconds. */
export interface Recurrence {
  /** The first occurrence strictly after `afterS`; undefined when there is none (the pattern's last date passed). */
  next(afterS: number): number | undefined;
  /** The last occurrence at or before `atS`; undefined when there is none. */
  last(atS: number): number | undefined;
  /** Whole seconds between occurrences when they are evenly spaced (`every`); undefined for a cron. */
  readonly periodS: number | undefined;
}

/** What a cron pattern is read with: 5 fields, or 6 with seconds first; fixed times as above. */
const CRON_OPTIONS = { mode: '5-or-6-parts', fixedTimeRule: 'no-wildcard' } as const;

/** Why `pattern` cannot be a schedule's cron in `tz`, or undefined when it can. */
export function cronProblem(pattern: string, tz: string): string | undefined {
  let cron: Cron;
  try {
    cron = new Cron(pattern, { ...CRON_OPTIONS, timezone: tz });
  } catch (error) {
    return `must be a cron pattern of 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first: ${(error as Error).message}`;
  }
  if (cron.nextRun(new Date(0)) === null) return 'never matches a date (such as February 31st)';
  return undefined;
}

/** Why `tz` is not an IANA time zone, or undefined when it is one. */
export function zoneProblem(tz: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return undefined;
  } catch {
    return "must be an IANA time zone, such as 'Europe/Berlin' or 'UTC'";
  }
}

/** The occurrences of a cron pattern in `tz` (both checked already: cronProblem, zoneProblem). */
export function cronRecurrence(pattern: string, tz: string): Recurrence {
  const cron = new Cron(pattern, { ...CRON_OPTIONS, timezone: tz });
  return {
    periodS: undefined,
    next(afterS) {
      const at = cron.nextRun(new Date(afterS * 1000 + 999));
      if (at === null) return undefined;
      const s = Math.floor(at.getTime() / 1000);
      return s > afterS ? s : undefined;
    },
    last(atS) {
      const [at] = cron.previousRuns(1, new Date(atS * 1000 + 1));
      return at === undefined ? undefined : Math.floor(at.getTime() / 1000);
    },
  };
}

/** The occurrences of `every` (checked already: everyProblem) on its grid from `anchorS`. */
export function everyRecurrence(every: string, anchorS: number): Recurrence {
  const periodS = everySeconds(every)!;
  return {
    periodS,
    next: (afterS) => nextOnGrid(anchorS, periodS, afterS),
    last: (atS) => lastOnGrid(anchorS, periodS, atS),
  };
}
