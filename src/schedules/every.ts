/*
 * `every`: a fixed interval, written as whole units: '30s', '5m', '1h30m', '1d'. Our own few lines
 * rather than a duration package: the grammar is this small and must refuse what the common ones
 * accept (fractions, milliseconds, months: an occurrence is a whole second, and a month is no
 * fixed interval; a calendar rule is a cron with a time zone).
 */

const UNIT_SECONDS = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
const EVERY_PATTERN = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** The shortest interval: occurrences are whole seconds (a job id holds the occurrence's epoch second). */
const MIN_EVERY_SECONDS = 1;
/** The longest: a year of 366 days. */
const MAX_EVERY_SECONDS = 366 * 86_400;

/** What is wrong with `text` as an `every`, or undefined when it reads as an interval. */
export function everyProblem(text: string): string | undefined {
  const seconds = everySeconds(text);
  if (seconds === undefined) return "must be whole units of d, h, m and s in that order, such as '30s', '5m', '1h30m' or '1d'";
  if (seconds < MIN_EVERY_SECONDS) return 'must be at least 1s';
  if (seconds > MAX_EVERY_SECONDS) return 'must be at most 366d';
  return undefined;
}

/** `text` in seconds; undefined when it is not whole units of d, h, m and s, in that order. */
export function everySeconds(text: string): number | undefined {
  const m = EVERY_PATTERN.exec(text);
  if (m === null || text === '') return undefined;
  const [, d, h, min, s] = m;
  return (
    Number(d ?? 0) * UNIT_SECONDS.d + Number(h ?? 0) * UNIT_SECONDS.h + Number(min ?? 0) * UNIT_SECONDS.m + Number(s ?? 0) * UNIT_SECONDS.s
  );
}

/**
 * The first occurrence of a grid strictly after `afterS`: the grid is `anchorS + k × periodS` for
 * whole k ≥ 0 (all in epoch seconds). Before the anchor, the anchor itself.
 */
export function nextOnGrid(anchorS: number, periodS: number, afterS: number): number {
  if (afterS < anchorS) return anchorS;
  return anchorS + (Math.floor((afterS - anchorS) / periodS) + 1) * periodS;
}

/** The last occurrence of the grid at or before `atS`; undefined before the anchor. */
export function lastOnGrid(anchorS: number, periodS: number, atS: number): number | undefined {
  if (atS < anchorS) return undefined;
  return anchorS + Math.floor((atS - anchorS) / periodS) * periodS;
}
