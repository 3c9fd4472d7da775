import { describe, expect, it } from 'vitest';
import { LaneAsks } from '../../../../src/worker/intake/lane-asks.js';

const lane = { weight: 1, rank: 1 };

describe('LaneAsks', () => {
  it('a lane is busy while its poller asks for more than one; it says so once, when work comes back', () => {
    const a = new LaneAsks<typeof lane>();
    expect([a.asked(lane, 10), a.asked(lane, 4), a.busy.has(lane)]).toEqual([true, false, true]);
    expect([a.asked(lane, 1), a.busy.has(lane)]).toEqual([false, false]);
    expect(a.asked(lane, 2)).toBe(true);
  });

  it('needs all it can get while asking for 10 (and before any ask), else its ask beside what it holds', () => {
    const a = new LaneAsks<typeof lane>();
    expect(a.need(lane, 3)).toBe(Number.POSITIVE_INFINITY);
    a.asked(lane, 2);
    expect(a.need(lane, 3)).toBe(5);
    a.asked(lane, 10);
    expect(a.need(lane, 3)).toBe(Number.POSITIVE_INFINITY);
  });
});
