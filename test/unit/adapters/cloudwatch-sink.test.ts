import { describe, expect, it } from 'vitest';
import { chunkDatums, toDatum } from '../../../src/adapters/cloudwatch-sink.js';

describe('CloudWatch datums (adapters/cloudwatch-sink.ts)', () => {
  const at = new Date(1_000);
  const datum = (values: number) =>
    toDatum({
      kind: 'distribution',
      name: 'WaitTime',
      dimensions: { Job: 'a', Queue: 'q' },
      timestamp: at,
      unit: 'Milliseconds',
      values: Array.from({ length: values }, (_, i) => 123_456.7 + i),
      counts: Array(values).fill(1_000),
    });

  it('maps a distribution to Values/Counts and a sum to Value, with the dimensions in order', () => {
    expect(datum(2)).toEqual({
      MetricName: 'WaitTime',
      Dimensions: [
        { Name: 'Job', Value: 'a' },
        { Name: 'Queue', Value: 'q' },
      ],
      Timestamp: at,
      Unit: 'Milliseconds',
      Values: [123_456.7, 123_457.7],
      Counts: [1_000, 1_000],
    });
    expect(
      toDatum({ kind: 'sum', name: 'Succeeded', dimensions: { Job: 'a', Queue: 'q' }, timestamp: at, unit: 'Count', value: 4 }),
    ).toMatchObject({
      MetricName: 'Succeeded',
      Unit: 'Count',
      Value: 4,
    });
  });

  it('puts at most 1,000 datums in one call', () => {
    expect(chunkDatums(Array.from({ length: 2_500 }, () => ({ MetricName: 'Succeeded', Value: 1 }))).map((c) => c.length)).toEqual([
      1_000, 1_000, 500,
    ]);
  });

  it('keeps each call under the 1 MB request limit', () => {
    const chunks = chunkDatums(Array.from({ length: 1_000 }, () => datum(150)));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(JSON.stringify(c).length).toBeLessThan(1_000_000);
  });
});
