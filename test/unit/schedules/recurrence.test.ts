import { describe, expect, it } from 'vitest';
import { cronProblem, cronRecurrence, everyRecurrence, type Recurrence, zoneProblem } from '../../../src/schedules/recurrence.js';

const s = (iso: string) => Date.parse(iso) / 1000;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** Every occurrence of `r` from `from` (exclusive) to `to` (inclusive), as UTC ISO strings. */
function between(r: Recurrence, from: string, to: string): string[] {
  const out: string[] = [];
  for (let at = r.next(s(from)); at !== undefined && at <= s(to); at = r.next(at)) out.push(iso(at));
  return out;
}

/** The same occurrences walked backwards with last(): they must agree with next(). */
function backwards(r: Recurrence, from: string, to: string): string[] {
  const out: string[] = [];
  for (let at = r.last(s(to)); at !== undefined && at > s(from); at = r.last(at - 1)) out.unshift(iso(at));
  return out;
}

describe('cron occurrences at the 2027 DST transitions (the rule in docs/guide/schedules.md)', () => {
  it('Berlin, 02:30 daily: on the spring-forward night at 03:00 CEST, the first instant after the gap', () => {
    const r = cronRecurrence('30 2 * * *', 'Europe/Berlin');
    const want = ['2027-03-27T01:30:00Z', '2027-03-28T01:00:00Z', '2027-03-29T00:30:00Z'];
    expect(between(r, '2027-03-26T12:00:00Z', '2027-03-29T12:00:00Z')).toEqual(want);
    expect(backwards(r, '2027-03-26T12:00:00Z', '2027-03-29T12:00:00Z')).toEqual(want);
  });

  it('Berlin, 02:30 daily: on the fall-back night once, on the first pass (CEST)', () => {
    const r = cronRecurrence('30 2 * * *', 'Europe/Berlin');
    const want = ['2027-10-30T00:30:00Z', '2027-10-31T00:30:00Z', '2027-11-01T01:30:00Z'];
    expect(between(r, '2027-10-29T12:00:00Z', '2027-11-01T12:00:00Z')).toEqual(want);
    expect(backwards(r, '2027-10-29T12:00:00Z', '2027-11-01T12:00:00Z')).toEqual(want);
    // Asked from inside the second pass (01:15Z is 02:15 CET), the next is the next day's, not 02:30 again.
    expect(iso(r.next(s('2027-10-31T01:15:00Z'))!)).toBe('2027-11-01T01:30:00Z');
  });

  it('New York: 02:30 on the spring-forward night at 03:00 EDT; 01:30 on the fall-back night once, on the first pass (EDT)', () => {
    expect(between(cronRecurrence('30 2 * * *', 'America/New_York'), '2027-03-13T00:00:00Z', '2027-03-15T12:00:00Z')).toEqual([
      '2027-03-13T07:30:00Z',
      '2027-03-14T07:00:00Z',
      '2027-03-15T06:30:00Z',
    ]);
    expect(between(cronRecurrence('30 1 * * *', 'America/New_York'), '2027-11-06T00:00:00Z', '2027-11-08T12:00:00Z')).toEqual([
      '2027-11-06T05:30:00Z',
      '2027-11-07T05:30:00Z',
      '2027-11-08T06:30:00Z',
    ]);
  });

  it('a list of fixed times is fixed times: 02:00 and 14:00 in Berlin both run on the spring-forward day', () => {
    expect(between(cronRecurrence('0 2,14 * * *', 'Europe/Berlin'), '2027-03-27T12:00:00Z', '2027-03-28T23:00:00Z')).toEqual([
      '2027-03-27T13:00:00Z',
      '2027-03-28T01:00:00Z',
      '2027-03-28T12:00:00Z',
    ]);
  });

  it('a range of fixed times too: 01:30, 02:30 and 03:30 in Berlin, the 02:30 at 03:00 on the spring-forward night', () => {
    expect(between(cronRecurrence('30 1-3 * * *', 'Europe/Berlin'), '2027-03-27T23:00:00Z', '2027-03-28T03:00:00Z')).toEqual([
      '2027-03-28T00:30:00Z',
      '2027-03-28T01:00:00Z',
      '2027-03-28T01:30:00Z',
    ]);
  });

  it('hourly follows the clock: every real hour through both transitions, none missing, none twice', () => {
    const hourly = cronRecurrence('0 * * * *', 'Europe/Berlin');
    for (const [from, to] of [
      ['2027-03-27T22:00:00Z', '2027-03-28T04:00:00Z'],
      ['2027-10-30T22:00:00Z', '2027-10-31T04:00:00Z'],
    ] as const) {
      const hours = between(hourly, from, to);
      expect(hours).toHaveLength(6);
      for (let i = 1; i < hours.length; i++) expect(Date.parse(hours[i]!) - Date.parse(hours[i - 1]!)).toBe(3_600_000);
      expect(backwards(hourly, from, to)).toEqual(hours);
    }
  });

  it('a step in the hour 02 follows the clock: skipped when it does not exist, run on both passes when it repeats', () => {
    const r = cronRecurrence('*/30 2 * * *', 'Europe/Berlin');
    expect(between(r, '2027-03-27T12:00:00Z', '2027-03-28T12:00:00Z')).toEqual([]);
    expect(between(r, '2027-10-30T12:00:00Z', '2027-10-31T12:00:00Z')).toEqual([
      '2027-10-31T00:00:00Z',
      '2027-10-31T00:30:00Z',
      '2027-10-31T01:00:00Z',
      '2027-10-31T01:30:00Z',
    ]);
  });

  it('seconds first, with 6 fields; zones with half-hour offsets', () => {
    expect(between(cronRecurrence('*/20 * * * * *', 'UTC'), '2027-01-01T00:00:00Z', '2027-01-01T00:01:00Z')).toEqual([
      '2027-01-01T00:00:20Z',
      '2027-01-01T00:00:40Z',
      '2027-01-01T00:01:00Z',
    ]);
    expect(iso(cronRecurrence('0 9 * * 1', 'Asia/Kolkata').next(s('2027-03-01T00:00:00Z'))!)).toBe('2027-03-01T03:30:00Z');
  });
});

describe('every', () => {
  it('runs on a grid from its anchor in real time, whatever the zone does', () => {
    const r = everyRecurrence('1h', s('2027-03-28T00:15:00Z'));
    expect(between(r, '2027-03-28T00:00:00Z', '2027-03-28T03:15:00Z')).toEqual([
      '2027-03-28T00:15:00Z',
      '2027-03-28T01:15:00Z',
      '2027-03-28T02:15:00Z',
      '2027-03-28T03:15:00Z',
    ]);
    expect(r.periodS).toBe(3_600);
    expect(r.last(s('2027-03-28T00:14:59Z'))).toBeUndefined();
  });
});

describe('what a schedule refuses', () => {
  it.each([
    ['* * * *', 'must be a cron pattern of 5 fields'],
    ['0 0 0 1 1 * 2030', 'must be a cron pattern of 5 fields'],
    ['61 * * * *', 'must be a cron pattern of 5 fields'],
    ['0 9 31 2 *', 'never matches a date'],
  ])('the cron %j: %s', (pattern, problem) => {
    expect(cronProblem(pattern, 'UTC')).toContain(problem);
  });

  it('an unknown zone', () => {
    expect(zoneProblem('Europe/Atlantis')).toContain('must be an IANA time zone');
    expect(zoneProblem('Europe/Berlin')).toBeUndefined();
  });
});
