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

  it('per message: a lane held to smaller receives takes more turns, so the messages follow the weights', () => {
    const a = lane('a', 1, 5);
    const b = lane('b', 1, 3);
    const c = lane('c', 1, 1);
    const size = new Map([
      [a, 10],
      [b, 10],
      [c, 6],
    ]); // c's buffer quota keeps its receives to 6
    const p = new LanePicker<typeof a>({ mode: 'weighted' }, 'message');
    const got = new Map([
      [a, 0],
      [b, 0],
      [c, 0],
    ]);
    for (let i = 0; i < 300; i++) {
      const chosen = p.peek([a, b, c])!;
      p.commit([a, b, c], chosen, size.get(chosen)!);
      got.set(chosen, got.get(chosen)! + size.get(chosen)!);
    }
    const total = got.get(a)! + got.get(b)! + got.get(c)!;
    for (const [l, w] of [
      [a, 5],
      [b, 3],
      [c, 1],
    ] as const)
      expect(got.get(l)! / total).toBeCloseTo(w / 9, 2);
    // Per turn, c would get a ninth of the turns and 6 of every 86 messages: 0.63 of its share.
  });

  it('per message: a receive is charged what came (refund), and a lane whose receive was out is owed the turns taken meanwhile', () => {
    const a = lane('a', 1);
    const b = lane('b', 1);
    const p = new LanePicker<typeof a>({ mode: 'weighted' }, 'message');
    p.commit([a, b], a, 10);
    p.refund(a, 9); // asked 10, 1 came: a has had 1
    p.commit([a, b], b, 10); // b's receive is out...
    for (let i = 0; i < 3; i++) p.commit([a], p.peek([a])!, 1); // ...while a takes three turns of 1
    // b has had 10, a 4: a goes on until level, b is not ahead for having been away.
    expect(p.peek([a, b])).toBe(a);
    for (let i = 0; i < 6; i++) p.commit([a, b], a, 1);
    expect(p.peek([a, b])).toBe(a); // 10 and 10: ties go to the first
    p.commit([a, b], a, 1);
    expect(p.peek([a, b])).toBe(b);
  });

  it('per message: a lane with work again when no peer has any is lifted to the floor: the other lane’s idle time earns it nothing', () => {
    const a = lane('a', 1);
    const b = lane('b', 1);
    const p = new LanePicker<typeof a>({ mode: 'weighted' }, 'message');
    for (let i = 0; i < 100; i++) p.commit([a], a, 10); // a alone for a long time
    p.join(b, []); // a's queue ran dry just before b got work: no busy peer
    p.join(a, [b]);
    const picks = Array.from({ length: 10 }, () => {
      const chosen = p.peek([a, b])!;
      p.commit([a, b], chosen, 10);
      return chosen.name;
    });
    expect(picks.filter((n) => n === 'a').length).toBeGreaterThanOrEqual(4);
  });

  it('per message: a lane is owed at most 40 messages, however long it trickled while the others were charged', () => {
    const a = lane('a', 1, 5);
    const b = lane('b', 1, 1);
    const p = new LanePicker<typeof a>({ mode: 'weighted' }, 'message');
    for (let i = 0; i < 1_000; i++) p.commit([a], a, 10); // b stays busy with a trickle and is never charged
    let bInARow = 0;
    while (p.peek([a, b]) === b) {
      p.commit([a, b], b, 10);
      bInARow++;
    }
    expect(bInARow).toBeLessThanOrEqual(5); // 40 owed, in receives of 10
  });

  it('per message: a lane that has work again starts level with its peers: idle time earns nothing', () => {
    const a = lane('a', 1);
    const b = lane('b', 1);
    const p = new LanePicker<typeof a>({ mode: 'weighted' }, 'message');
    for (let i = 0; i < 20; i++) p.commit([a], a, 10); // a alone, 200 messages
    p.join(b, [a]);
    const picks = Array.from({ length: 6 }, () => {
      const chosen = p.peek([a, b])!;
      p.commit([a, b], chosen, 10);
      return chosen.name;
    });
    expect(picks.filter((n) => n === 'b')).toHaveLength(3);
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

  it('a lane that needs less than its share holds what it needs, and the others share the rest by weight (water-filling)', () => {
    const main = { name: 'main', weight: 4, rank: 1 };
    const spill = { name: 'spill', weight: 1, rank: 1 };
    const third = { name: 'third', weight: 1, rank: 1 };
    const weighted = { mode: 'weighted' } as const;
    // main's work trickles in (its poll asked for 2): spill, backlogged, gets the other 18 of 20, not 4.
    const trickle = (l: { name: string }) => (l.name === 'main' ? 2 : Number.POSITIVE_INFINITY);
    expect(bufferQuota(weighted, spill, new Set([main, spill]), 20, trickle)).toBe(18);
    expect(bufferQuota(weighted, main, new Set([main, spill]), 20, trickle)).toBe(2);
    // Two backlogged lanes share what the trickle leaves by their weights.
    expect(bufferQuota(weighted, spill, new Set([main, spill, third]), 20, trickle)).toBe(9);
    // Every lane needing its share or more: weights alone, as without needs.
    expect(bufferQuota(weighted, spill, new Set([main, spill]), 20, () => 100)).toBe(4);
  });
});
