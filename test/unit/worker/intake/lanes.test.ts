import { describe, expect, it } from 'vitest';
import { bufferQuota, LanePicker } from '../../../../src/worker/intake/lanes.js';

const lane = (name: string, rank: number, weight = 1) => ({ name, rank, weight });

describe('LanePicker', () => {
  it('weighted: takes lanes in proportion to their weights, interleaved', () => {
    const main = lane('main', 1, 3);
    const low = lane('low', 1, 1);
    const p = new LanePicker<typeof main>({ mode: 'weighted' });
    const picks = Array.from({ length: 8 }, () => p.choose([main, low])!.name);
    expect(picks).toEqual(['main', 'main', 'low', 'main', 'main', 'main', 'low', 'main']);
  });

  it('weighted: tiers count only through the weights', () => {
    const high = lane('high', 0, 6);
    const low = lane('low', 2, 1);
    const p = new LanePicker<typeof high>({ mode: 'weighted' });
    const picks = Array.from({ length: 70 }, () => p.choose([high, low])!.name);
    expect(picks.filter((n) => n === 'low')).toHaveLength(10);
  });

  it('strict: the highest tier with work goes first; a lower tier keeps minShare of the turns', () => {
    const high = lane('high', 0);
    const normal = lane('normal', 1);
    const low = lane('low', 2);
    const p = new LanePicker<typeof high>({ mode: 'strict', minShare: 0.1 });
    const picks = Array.from({ length: 100 }, () => p.choose([high, normal, low])!.name);
    // Passed over 9 times in a row, a lower tier gets the 10th turn: each of them 1 in 10 at least.
    expect(picks.slice(0, 9).every((n) => n === 'high')).toBe(true);
    expect(picks.filter((n) => n === 'normal').length).toBeGreaterThanOrEqual(9);
    expect(picks.filter((n) => n === 'low').length).toBeGreaterThanOrEqual(9);
    expect(picks.filter((n) => n === 'high').length).toBeGreaterThanOrEqual(78);
    // Without higher work, the next tier takes the turns high took.
    const q = new LanePicker<typeof high>({ mode: 'strict', minShare: 0.1 });
    expect(Array.from({ length: 5 }, () => q.choose([normal, low])!.name)).toEqual(['normal', 'normal', 'normal', 'normal', 'normal']);
  });

  it('strict: lanes of one tier share it by weight (a queue and its spillover queue)', () => {
    const main = lane('main', 1, 4);
    const spill = lane('spill', 1, 1);
    const p = new LanePicker<typeof main>({ mode: 'strict', minShare: 0.05 });
    const picks = Array.from({ length: 10 }, () => p.choose([main, spill])!.name);
    expect(picks.filter((n) => n === 'spill')).toHaveLength(2);
  });

  it('gives everything to the only lane with work, and nothing when none has any', () => {
    const a = lane('a', 2);
    const p = new LanePicker<typeof a>({ mode: 'strict', minShare: 0.05 });
    expect(p.choose([a])).toBe(a);
    expect(p.choose([])).toBeUndefined();
  });
});

describe('bufferQuota', () => {
  const heavy = { name: 'heavy', weight: 5, rank: 0 };
  const light = { name: 'light', weight: 1, rank: 0 };
  const low = { name: 'low', weight: 1, rank: 2 };
  it.each([
    // rule, pick, lane, busy lanes, prefetch, quota
    ['alone with work: the whole buffer', { mode: 'weighted' } as const, light, [light], 50, Number.POSITIVE_INFINITY],
    ['weighted: its weight share', { mode: 'weighted' } as const, heavy, [heavy, light], 60, 50],
    ['weighted: a light lane its share, at least 1', { mode: 'weighted' } as const, light, [heavy, light], 60, 10],
    ['weighted, small prefetch: at least 1', { mode: 'weighted' } as const, light, [heavy, light], 4, 1],
    ['strict: a lower lane its minimum share', { mode: 'strict', minShare: 0.05 } as const, low, [heavy, low], 60, 3],
  ])('%s', (_rule, pick, lane, busy, prefetch, quota) => {
    expect(bufferQuota(pick, lane, new Set(busy), prefetch)).toBe(quota);
  });
});
