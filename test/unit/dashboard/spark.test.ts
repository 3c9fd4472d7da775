import { describe, expect, it } from 'vitest';
import { sparkline } from '../../../src/dashboard/spark.js';

describe('sparkline', () => {
  const from = 0;
  const to = 10 * 60_000;

  it('draws a counting series with a point a minute, the minutes without data at 0', () => {
    const svg = sparkline([{ at: 120_000, value: 4 }], { from, to, label: 'runs', gaps: 'zero' }).text;
    expect(svg).toContain('data-points="10"');
    expect(svg).toContain('now 0, max 4');
  });

  it('says "no data" when the server has none, rather than a flat zero; joins samples as they are', () => {
    expect(sparkline([], { from, to, label: 'sent', gaps: 'zero' }).text).toContain('no data');
    const joined = sparkline(
      [
        { at: 0, value: 1 },
        { at: 300_000, value: 3 },
      ],
      { from, to, label: 'waiting', gaps: 'join' },
    ).text;
    expect(joined).toContain('data-points="2"');
    expect(joined).toMatch(/<polyline points="0\.0,\S+ 80\.0,2\.0"\/>/);
  });

  it('escapes its label', () => {
    expect(sparkline([], { from, to, label: '<b>q</b>' }).text).toContain('&lt;b&gt;q&lt;/b&gt;');
  });
});
