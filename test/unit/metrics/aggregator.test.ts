import { describe, expect, it } from 'vitest';
import { bucketValue, MAX_VALUES_PER_POINT, MetricsAggregator } from '../../../src/metrics/aggregator.js';
import type { DistributionPoint, SumPoint } from '../../../src/ports/metrics-sink.js';

describe('bucketValue', () => {
  it('keeps every value within about 5% and sub-millisecond values at 0', () => {
    for (const ms of [1, 2, 7.5, 10, 99, 1_000, 12_345, 600_000, 43_200_000]) {
      expect(Math.abs(bucketValue(ms) - ms) / ms).toBeLessThan(0.06);
    }
    expect(bucketValue(0)).toBe(0);
    expect(bucketValue(0.4)).toBe(0);
  });

  it('maps 1 ms to 12 hours onto fewer than 200 distinct values', () => {
    const distinct = new Set<number>();
    for (let ms = 1; ms < 43_200_000; ms *= 1.01) distinct.add(bucketValue(ms));
    expect(distinct.size).toBeLessThan(200);
  });
});

describe('MetricsAggregator', () => {
  it('keeps timings as Values/Counts and counters as sums, per job and queue', () => {
    const a = new MetricsAggregator();
    for (const ms of [10, 10, 10, 250]) a.timing('email', 'jobs', 'ProcessTime', ms);
    a.count('email', 'jobs', 'Succeeded');
    a.count('email', 'jobs', 'Succeeded', 2);
    a.count('resize', 'jobs', 'Failed');
    const data = a.drain(new Date(0));
    const process = data.find((d) => d.name === 'ProcessTime') as DistributionPoint;
    expect(process.dimensions).toEqual({ Job: 'email', Queue: 'jobs' });
    expect(process.counts).toEqual([3, 1]);
    expect(process.unit).toBe('Milliseconds');
    expect((data.find((d) => d.name === 'Succeeded') as SumPoint).value).toBe(3);
    expect(data.find((d) => d.name === 'Failed')?.dimensions.Job).toBe('resize');
    expect(a.isEmpty).toBe(true);
    expect(a.drain()).toEqual([]);
  });

  it('never puts more than 150 distinct values in one point (one CloudWatch datum)', () => {
    const a = new MetricsAggregator();
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) a.timing('j', 'q', 'WaitTime', ms);
    const data = a.drain() as DistributionPoint[];
    expect(data.length).toBeGreaterThan(1);
    for (const d of data) expect(d.values.length).toBeLessThanOrEqual(MAX_VALUES_PER_POINT);
    const total = data.reduce((n, d) => n + d.counts.reduce((x, y) => x + y, 0), 0);
    let expected = 0;
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) expected++;
    expect(total).toBe(expected);
  });
});
