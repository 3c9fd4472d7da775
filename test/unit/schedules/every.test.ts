import { describe, expect, it } from 'vitest';
import { everyProblem, everySeconds, lastOnGrid, nextOnGrid } from '../../../src/schedules/every.js';

describe('every', () => {
  it.each([
    ['1s', 1],
    ['30s', 30],
    ['5m', 300],
    ['1h30m', 5_400],
    ['1d', 86_400],
    ['2d12h', 216_000],
    ['366d', 31_622_400],
  ])('%s is %i seconds', (text, seconds) => {
    expect(everySeconds(text)).toBe(seconds);
    expect(everyProblem(text)).toBeUndefined();
  });

  it.each([
    ['', 'must be whole units'],
    ['1.5h', 'must be whole units'],
    ['500ms', 'must be whole units'],
    ['1mo', 'must be whole units'],
    ['30m1h', 'must be whole units'], // units out of order
    ['5 m', 'must be whole units'],
    ['-1s', 'must be whole units'],
    ['0s', 'must be at least 1s'],
    ['367d', 'must be at most 366d'],
  ])('refuses %j: %s', (text, problem) => {
    expect(everyProblem(text)).toContain(problem);
  });

  it('keeps a fixed grid from its anchor, whatever the time asked from', () => {
    const anchor = 1_000;
    expect(nextOnGrid(anchor, 60, 0)).toBe(1_000); // before the anchor: the anchor
    expect(nextOnGrid(anchor, 60, 1_000)).toBe(1_060); // strictly after
    expect(nextOnGrid(anchor, 60, 1_059)).toBe(1_060);
    expect(nextOnGrid(anchor, 60, 1_061)).toBe(1_120);
    expect(lastOnGrid(anchor, 60, 999)).toBeUndefined();
    expect(lastOnGrid(anchor, 60, 1_000)).toBe(1_000);
    expect(lastOnGrid(anchor, 60, 1_119)).toBe(1_060);
  });
});
