import { describe, expect, it } from 'vitest';
import { pickWeighted } from '../../../../src/worker/intake/weighted.js';

describe('pickWeighted', () => {
  it('takes queues in proportion to their weights, interleaved', () => {
    const main = { name: 'main', weight: 3, credit: 0 };
    const low = { name: 'low', weight: 1, credit: 0 };
    const picks = Array.from({ length: 8 }, () => pickWeighted([main, low])!.name);
    expect(picks).toEqual(['main', 'main', 'low', 'main', 'main', 'main', 'low', 'main']);
    expect(picks.filter((p) => p === 'low')).toHaveLength(2);
  });

  it('gives everything to the only queue with work', () => {
    const a = { weight: 1, credit: 0 };
    expect(pickWeighted([a])).toBe(a);
    expect(pickWeighted([])).toBeUndefined();
  });
});
