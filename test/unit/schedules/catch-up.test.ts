import { describe, expect, it } from 'vitest';
import { bounded, dueAt, ON_TIME_S } from '../../../src/schedules/catch-up.js';
import { cronRecurrence, everyRecurrence } from '../../../src/schedules/recurrence.js';

const minute = everyRecurrence('1m', 0);

describe('which due occurrences a tick fires', () => {
  it('on time: the one due, nothing skipped, and the next after now', () => {
    expect(dueAt(minute, 600, 601, 'none')).toEqual({ fire: [600], skipped: 0, next: 660 });
    expect(dueAt(minute, 600, 601, 'latest')).toEqual({ fire: [600], skipped: 0, next: 660 });
  });

  it('nothing due yet: nothing fired, it waits for its first unfired occurrence', () => {
    expect(dueAt(minute, 660, 601, 'latest')).toEqual({ fire: [], skipped: 0, next: 660 });
  });

  it("after every worker was down 20 minutes: 'none' runs the latest only if it is on time", () => {
    // Due: 600 … 1800 (21 occurrences); now 1801: the latest (1800) is 1 s late.
    expect(dueAt(minute, 600, 1_801, 'none')).toEqual({ fire: [1_800], skipped: 20, next: 1_860 });
    // Every 5 minutes, now 1800 + ON_TIME_S + 40: even the latest (1800) is too late, and all 5 are skipped.
    expect(dueAt(everyRecurrence('5m', 0), 600, 1_800 + ON_TIME_S + 40, 'none')).toEqual({ fire: [], skipped: 5, next: 2_100 });
  });

  it("'latest' runs the latest due however late; the rest are skipped", () => {
    expect(dueAt(minute, 600, 1_830, 'latest')).toEqual({ fire: [1_800], skipped: 20, next: 1_860 });
    expect(dueAt(everyRecurrence('5m', 0), 600, 1_800 + ON_TIME_S + 40, 'latest')).toEqual({ fire: [1_800], skipped: 4, next: 2_100 });
  });

  it('occurrences at most ON_TIME_S late all run whatever the rule: a tick a few seconds late is not downtime', () => {
    const second = everyRecurrence('1s', 0);
    for (const rule of ['none', 'latest', { withinS: 1, max: 1_000 }] as const)
      expect(dueAt(second, 100, 103, rule)).toEqual({ fire: [100, 101, 102, 103], skipped: 0, next: 104 });
    // Down 5 minutes: the last ON_TIME_S seconds run, the 240 before them are skipped.
    const late = dueAt(second, 100, 400, 'latest');
    expect([late.fire.length, late.fire[0], late.skipped]).toEqual([ON_TIME_S + 1, 400 - ON_TIME_S, 240]);
  });

  it('{ within, max }: every occurrence within the window, oldest first, at most the latest max', () => {
    expect(dueAt(minute, 600, 1_830, { withinS: 300, max: 100 })).toEqual({
      fire: [1_560, 1_620, 1_680, 1_740, 1_800],
      skipped: 16,
      next: 1_860,
    });
    expect(dueAt(minute, 600, 1_830, { withinS: 3_600, max: 3 })).toEqual({ fire: [1_680, 1_740, 1_800], skipped: 18, next: 1_860 });
  });

  it('counts a cron’s skipped occurrences one by one, and a year of a 1-second every by arithmetic', () => {
    const hourly = cronRecurrence('0 * * * *', 'Europe/Berlin');
    const from = Date.parse('2027-10-30T22:00:00Z') / 1000;
    const now = Date.parse('2027-10-31T04:30:00Z') / 1000; // across the fall-back: 7 real hours
    expect(dueAt(hourly, from, now, 'latest')).toEqual({ fire: [from + 6 * 3_600], skipped: 6, next: from + 7 * 3_600 });
    const second = everyRecurrence('1s', 0);
    // The last ON_TIME_S + 1 seconds are on time and run.
    expect(dueAt(second, 1, 366 * 86_400, 'latest').skipped).toBe(366 * 86_400 - (ON_TIME_S + 1));
  });
});

describe('a first unfired occurrence that is not one (a spec changed)', () => {
  it('counts only real occurrences', () => {
    const hourly = cronRecurrence('0 * * * *', 'UTC');
    expect(dueAt(hourly, 30, 7_200, { withinS: 86_400, max: 100 })).toEqual({ fire: [3_600, 7_200], skipped: 0, next: 10_800 });
  });
});

describe('a schedule’s start and end', () => {
  it('bound its occurrences on both sides', () => {
    const r = bounded(minute, 300, 480);
    expect(r.next(0)).toBe(300);
    expect(r.next(420)).toBe(480);
    expect(r.next(480)).toBeUndefined();
    expect(r.last(1_000)).toBe(480);
    expect(r.last(299)).toBeUndefined();
    expect(dueAt(r, 300, 10_000, 'latest')).toEqual({ fire: [480], skipped: 3, next: undefined });
  });
});
